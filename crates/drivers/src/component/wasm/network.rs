//! The network a WASM guest gets: none. Each attempt to use it is denied, logged under the
//! proxy's name with what it tried, and counted; the count is reported when the instance ends.

use std::fmt;
use std::net::SocketAddr;

/// One attempt to reach the network, as the guest asked for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NetworkUse {
    TcpBind(SocketAddr),
    TcpConnect(SocketAddr),
    /// Listening on a socket that could not have been bound: the address is the wildcard
    /// the host would have bound it to.
    TcpListen(SocketAddr),
    UdpBind(SocketAddr),
    /// Sending and receiving datagrams, with one peer or with any.
    UdpExchange(Option<SocketAddr>),
    NameLookup(String),
    /// An outgoing `wasi:http` request.
    HttpRequest {
        method: String,
        uri: String,
    },
}

impl fmt::Display for NetworkUse {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::TcpBind(address) => write!(f, "bind a TCP socket to {address}"),
            Self::TcpConnect(address) => write!(f, "connect to {address} over TCP"),
            Self::TcpListen(address) => write!(f, "listen for TCP connections on {address}"),
            Self::UdpBind(address) => write!(f, "bind a UDP socket to {address}"),
            Self::UdpExchange(Some(address)) => write!(f, "exchange UDP datagrams with {address}"),
            Self::UdpExchange(None) => write!(f, "exchange UDP datagrams with any address"),
            Self::NameLookup(name) => write!(f, "resolve the name {name:?}"),
            Self::HttpRequest { method, uri } => write!(f, "send an HTTP request: {method} {uri}"),
        }
    }
}

/// The attempts of one instance. Dropped with the instance's store, however the instance
/// ends, which is when the total is reported.
#[derive(Debug)]
pub struct NetworkAttempts {
    component: String,
    denied: u64,
}

impl NetworkAttempts {
    pub fn new(component: &str) -> Self {
        Self {
            component: component.to_owned(),
            denied: 0,
        }
    }

    /// Records that `attempt` was denied, and says so.
    pub fn deny(&mut self, attempt: NetworkUse) {
        self.denied += 1;
        tracing::warn!(
            component = %self.component,
            "denied a network attempt: tried to {attempt} (a WASM proxy has no network)"
        );
    }
}

impl Drop for NetworkAttempts {
    fn drop(&mut self) {
        if self.denied > 0 {
            let times = match self.denied {
                1 => "once".to_owned(),
                n => format!("{n} times"),
            };
            tracing::warn!(
                component = %self.component,
                attempts = self.denied,
                "proxy `{}` tried the network {times}; denied",
                self.component
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_denial_is_counted() {
        let mut attempts = NetworkAttempts::new("guard");
        assert_eq!(attempts.denied, 0);
        attempts.deny(NetworkUse::TcpConnect("127.0.0.1:9".parse().unwrap()));
        attempts.deny(NetworkUse::NameLookup("example.com".to_owned()));
        assert_eq!(attempts.denied, 2);
    }

    #[test]
    fn an_attempt_reads_as_what_was_tried() {
        let address: SocketAddr = "[::1]:443".parse().unwrap();
        assert_eq!(
            NetworkUse::TcpConnect(address).to_string(),
            "connect to [::1]:443 over TCP"
        );
        assert_eq!(
            NetworkUse::UdpExchange(None).to_string(),
            "exchange UDP datagrams with any address"
        );
        assert_eq!(
            NetworkUse::NameLookup("example.com".to_owned()).to_string(),
            "resolve the name \"example.com\""
        );
    }
}
