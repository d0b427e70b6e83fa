//! A TCP relay between a client and `serve` that the test can cut, as a network that goes
//! away: every connection through it is dropped at once and, until it is restored, new ones
//! are accepted and dropped (a client sees its attempts fail).

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

pub struct Relay {
    /// `127.0.0.1:PORT`, where clients connect.
    pub addr: String,
    down: Arc<AtomicBool>,
    open: Arc<Mutex<Vec<TcpStream>>>,
}

impl Relay {
    /// Relays to `target` (`HOST:PORT`).
    pub fn to(target: &str) -> Relay {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind the relay");
        let addr = listener.local_addr().unwrap().to_string();
        let down = Arc::new(AtomicBool::new(false));
        let open = Arc::new(Mutex::new(Vec::new()));
        let target = target.to_string();
        {
            let down = down.clone();
            let open = open.clone();
            std::thread::spawn(move || {
                for client in listener.incoming() {
                    let Ok(client) = client else { continue };
                    if down.load(Ordering::SeqCst) {
                        let _ = client.shutdown(Shutdown::Both);
                        continue;
                    }
                    let Ok(server) = TcpStream::connect(&target) else {
                        continue;
                    };
                    let _ = client.set_nodelay(true);
                    let _ = server.set_nodelay(true);
                    {
                        let mut open = open.lock().unwrap();
                        open.push(client.try_clone().unwrap());
                        open.push(server.try_clone().unwrap());
                    }
                    pipe(client.try_clone().unwrap(), server.try_clone().unwrap());
                    pipe(server, client);
                }
            });
        }
        Relay { addr, down, open }
    }

    /// The network goes: every connection through the relay is dropped, and new ones are
    /// until [`Relay::restore`].
    pub fn cut(&self) {
        self.down.store(true, Ordering::SeqCst);
        for stream in self.open.lock().unwrap().drain(..) {
            let _ = stream.shutdown(Shutdown::Both);
        }
    }

    /// The network is back; returns when.
    pub fn restore(&self) -> Instant {
        self.down.store(false, Ordering::SeqCst);
        Instant::now()
    }
}

fn pipe(mut from: TcpStream, mut to: TcpStream) {
    std::thread::spawn(move || {
        let mut buffer = [0u8; 16 * 1024];
        loop {
            match from.read(&mut buffer) {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    if to.write_all(&buffer[..n]).is_err() {
                        break;
                    }
                }
            }
        }
        let _ = to.shutdown(Shutdown::Both);
        let _ = from.shutdown(Shutdown::Both);
    });
}
