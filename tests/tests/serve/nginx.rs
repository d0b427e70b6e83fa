//! A real nginx (Debian's package, installed by .ci/setup-nginx) run as the test user with its
//! own prefix and config in a temporary directory, in front of `serve` replicas: the site is
//! docs/deploy/nginx/acp.conf as shipped, with the replicas' addresses and nginx's loopback
//! port put in. Stopped when dropped.

use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use acp_conductor_tests::editor::patience;

/// Where Debian puts it; `nginx` on the PATH otherwise.
fn nginx_program() -> PathBuf {
    let debian = Path::new("/usr/sbin/nginx");
    if debian.exists() {
        debian.to_path_buf()
    } else {
        PathBuf::from("nginx")
    }
}

pub struct Nginx {
    child: Child,
    dir: PathBuf,
    /// `127.0.0.1:PORT`.
    pub addr: String,
}

impl Nginx {
    /// nginx with the shipped site, its replicas `r1` and `r2` at `replicas`, in `dir`.
    pub fn start(dir: &Path, replicas: [&str; 2]) -> Nginx {
        let site = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/deploy/nginx/acp.conf");
        let site =
            std::fs::read_to_string(&site).unwrap_or_else(|e| panic!("{}: {e}", site.display()));
        let port = free_port();
        let addr = format!("127.0.0.1:{port}");
        let site = site
            .replace("127.0.0.1:8081", replicas[0])
            .replace("127.0.0.1:8082", replicas[1])
            .replace("listen 8080;", &format!("listen {addr};"));
        let dir = dir.join("nginx");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("acp.conf"), site).unwrap();
        let d = dir.display();
        let main = format!(
            "daemon off;\nworker_processes 1;\npid {d}/nginx.pid;\nerror_log {d}/error.log info;\n\
             events {{ worker_connections 256; }}\n\
             http {{\n    access_log {d}/access.log;\n    client_body_temp_path {d}/client_body;\n    \
             proxy_temp_path {d}/proxy;\n    fastcgi_temp_path {d}/fastcgi;\n    \
             uwsgi_temp_path {d}/uwsgi;\n    scgi_temp_path {d}/scgi;\n    \
             include {d}/acp.conf;\n}}\n"
        );
        std::fs::write(dir.join("nginx.conf"), main).unwrap();
        let child = Command::new(nginx_program())
            .arg("-p")
            .arg(&dir)
            .arg("-c")
            .arg(dir.join("nginx.conf"))
            .arg("-e")
            .arg(dir.join("error.log"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("nginx runs (.ci/setup-nginx installs it)");
        let mut nginx = Nginx { child, dir, addr };
        nginx.wait_listening();
        nginx
    }

    fn wait_listening(&mut self) {
        let deadline = Instant::now() + patience();
        while TcpStream::connect(&self.addr).is_err() {
            if let Ok(Some(status)) = self.child.try_wait() {
                panic!("nginx exited ({status}):\n{}", self.error_log());
            }
            assert!(
                Instant::now() < deadline,
                "nginx never listened:\n{}",
                self.error_log()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    pub fn error_log(&self) -> String {
        std::fs::read_to_string(self.dir.join("error.log")).unwrap_or_default()
    }

    pub fn ws_url(&self) -> String {
        format!("ws://{}/acp", self.addr)
    }

    pub fn http_url(&self) -> String {
        format!("http://{}/acp", self.addr)
    }
}

impl Drop for Nginx {
    fn drop(&mut self) {
        // SAFETY: kill(2) on the child we started and have not reaped.
        unsafe {
            libc::kill(self.child.id() as libc::pid_t, libc::SIGTERM);
        }
        let _ = self.child.wait();
        if std::thread::panicking() {
            eprintln!("--- nginx error.log ---\n{}", self.error_log());
        }
    }
}

/// A loopback port nobody listens on now.
fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}
