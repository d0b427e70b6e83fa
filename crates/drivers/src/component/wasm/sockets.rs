//! `wasi:sockets` for WASI 0.2 components, with every operation denied: a proxy that links
//! `std::net` loads and runs, and each use of the network fails inside it with `access-denied`.
//!
//! No host socket is ever opened. Creating a socket hands the guest a placeholder, so that
//! the call that would reach the network (bind, connect, listen, send) carries its address
//! and can be reported ([`NetworkAttempts`]); name lookups are denied with the name.
//! `instance-network` is wasmtime's own: the network handle it hands out touches nothing.

use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr};

use wasmtime::component::{HasData, Linker, Resource, ResourceTable, ResourceTableError};
use wasmtime_wasi::p2::bindings::sockets::ip_name_lookup::{self, IpAddress, ResolveAddressStream};
use wasmtime_wasi::p2::bindings::sockets::network::{
    self, ErrorCode, IpAddressFamily, IpSocketAddress, Network,
};
use wasmtime_wasi::p2::bindings::sockets::tcp::{self, ShutdownType, TcpSocket};
use wasmtime_wasi::p2::bindings::sockets::udp::{
    self, IncomingDatagram, IncomingDatagramStream, OutgoingDatagram, OutgoingDatagramStream,
    UdpSocket,
};
use wasmtime_wasi::p2::bindings::sockets::{tcp_create_socket, udp_create_socket};
use wasmtime_wasi::p2::{DynInputStream, DynOutputStream, DynPollable, SocketError, SocketResult};
use wasmtime_wasi_io::poll::{Pollable, subscribe};

use super::network::{NetworkAttempts, NetworkUse};

/// What the guest holds for a TCP or UDP socket: it can never be bound, connected or
/// listening, so its family is all there is to know.
struct DeniedSocket {
    family: IpAddressFamily,
}

#[wasmtime_wasi::async_trait]
impl Pollable for DeniedSocket {
    /// Nothing is ever in progress on the socket: waiting on it returns at once.
    async fn ready(&mut self) {}
}

/// The host side of the denied interfaces: the instance's resources and its attempts.
pub struct DeniedSockets<'a> {
    pub table: &'a mut ResourceTable,
    pub attempts: &'a mut NetworkAttempts,
}

/// Marks [`DeniedSockets`] as the data the interfaces' functions are given.
pub struct Denied;

impl HasData for Denied {
    type Data<'a> = DeniedSockets<'a>;
}

/// Links every interface of `wasi:sockets` but `instance-network` (wasmtime's hands out the
/// network handle, which grants nothing here); `getter` finds their data in the store's.
pub fn add_to_linker<T: Send + 'static>(
    linker: &mut Linker<T>,
    getter: fn(&mut T) -> DeniedSockets<'_>,
) -> wasmtime::Result<()> {
    let options = network::LinkOptions::default();
    network::add_to_linker::<T, Denied>(linker, &options, getter)?;
    tcp::add_to_linker::<T, Denied>(linker, getter)?;
    tcp_create_socket::add_to_linker::<T, Denied>(linker, getter)?;
    udp::add_to_linker::<T, Denied>(linker, getter)?;
    udp_create_socket::add_to_linker::<T, Denied>(linker, getter)?;
    ip_name_lookup::add_to_linker::<T, Denied>(linker, getter)?;
    Ok(())
}

impl DeniedSockets<'_> {
    /// A new placeholder socket. The bindings type a socket handle after wasmtime's own
    /// socket (`R` is `TcpSocket` or `UdpSocket`), which this host never makes: the handle's
    /// number is that of a [`DeniedSocket`] in the table, and every function here looks it up
    /// as one. A full table is the guest's socket limit.
    fn create<R: 'static>(&mut self, family: IpAddressFamily) -> SocketResult<Resource<R>> {
        let socket = self
            .table
            .push(DeniedSocket { family })
            .map_err(|_| ErrorCode::NewSocketLimit)?;
        Ok(Resource::new_own(socket.rep()))
    }

    fn socket<R: 'static>(
        &self,
        handle: &Resource<R>,
    ) -> Result<&DeniedSocket, ResourceTableError> {
        self.table
            .get(&Resource::<DeniedSocket>::new_borrow(handle.rep()))
    }

    fn drop_socket<R: 'static>(&mut self, handle: Resource<R>) -> wasmtime::Result<()> {
        self.table
            .delete(Resource::<DeniedSocket>::new_own(handle.rep()))?;
        Ok(())
    }

    fn subscribe_socket<R: 'static>(
        &mut self,
        handle: Resource<R>,
    ) -> wasmtime::Result<Resource<DynPollable>> {
        subscribe(
            self.table,
            Resource::<DeniedSocket>::new_borrow(handle.rep()),
        )
    }

    /// Checks that `network` is the guest's (as wasmtime does), then denies `attempt`.
    fn deny<V>(&mut self, network: &Resource<Network>, attempt: NetworkUse) -> SocketResult<V> {
        self.table.get(network)?;
        self.attempts.deny(attempt);
        Err(ErrorCode::AccessDenied.into())
    }

    /// The wildcard address of `socket`'s family: what listening on an unbound socket binds.
    fn wildcard<R: 'static>(&self, socket: &Resource<R>) -> SocketResult<SocketAddr> {
        Ok(match self.socket(socket)?.family {
            IpAddressFamily::Ipv4 => (Ipv4Addr::UNSPECIFIED, 0).into(),
            IpAddressFamily::Ipv6 => (Ipv6Addr::UNSPECIFIED, 0).into(),
        })
    }
}

/// The network handle and the error codes of the other interfaces.
impl network::Host for DeniedSockets<'_> {
    fn convert_error_code(&mut self, error: SocketError) -> wasmtime::Result<ErrorCode> {
        error.downcast()
    }

    fn network_error_code(
        &mut self,
        error: Resource<wasmtime::Error>,
    ) -> wasmtime::Result<Option<ErrorCode>> {
        let error = self.table.get(&error)?;
        Ok(error.downcast_ref::<std::io::Error>().map(ErrorCode::from))
    }
}

impl network::HostNetwork for DeniedSockets<'_> {
    fn drop(&mut self, network: Resource<Network>) -> wasmtime::Result<()> {
        self.table.delete(network)?;
        Ok(())
    }
}

impl tcp_create_socket::Host for DeniedSockets<'_> {
    fn create_tcp_socket(&mut self, family: IpAddressFamily) -> SocketResult<Resource<TcpSocket>> {
        self.create(family)
    }
}

impl udp_create_socket::Host for DeniedSockets<'_> {
    async fn create_udp_socket(
        &mut self,
        family: IpAddressFamily,
    ) -> SocketResult<Resource<UdpSocket>> {
        self.create(family)
    }
}

impl tcp::Host for DeniedSockets<'_> {}

/// Socket options are refused like the rest: there is no host socket to hold them.
impl tcp::HostTcpSocket for DeniedSockets<'_> {
    async fn start_bind(
        &mut self,
        _socket: Resource<TcpSocket>,
        network: Resource<Network>,
        address: IpSocketAddress,
    ) -> SocketResult<()> {
        self.deny(&network, NetworkUse::TcpBind(address.into()))
    }

    fn finish_bind(&mut self, _socket: Resource<TcpSocket>) -> SocketResult<()> {
        Err(ErrorCode::NotInProgress.into())
    }

    fn start_connect(
        &mut self,
        _socket: Resource<TcpSocket>,
        network: Resource<Network>,
        address: IpSocketAddress,
    ) -> SocketResult<()> {
        self.deny(&network, NetworkUse::TcpConnect(address.into()))
    }

    fn finish_connect(
        &mut self,
        _socket: Resource<TcpSocket>,
    ) -> SocketResult<(Resource<DynInputStream>, Resource<DynOutputStream>)> {
        Err(ErrorCode::NotInProgress.into())
    }

    async fn start_listen(&mut self, socket: Resource<TcpSocket>) -> SocketResult<()> {
        let address = self.wildcard(&socket)?;
        self.attempts.deny(NetworkUse::TcpListen(address));
        Err(ErrorCode::AccessDenied.into())
    }

    fn finish_listen(&mut self, _socket: Resource<TcpSocket>) -> SocketResult<()> {
        Err(ErrorCode::NotInProgress.into())
    }

    fn accept(
        &mut self,
        _socket: Resource<TcpSocket>,
    ) -> SocketResult<(
        Resource<TcpSocket>,
        Resource<DynInputStream>,
        Resource<DynOutputStream>,
    )> {
        Err(ErrorCode::InvalidState.into())
    }

    fn local_address(&mut self, _socket: Resource<TcpSocket>) -> SocketResult<IpSocketAddress> {
        Err(ErrorCode::InvalidState.into())
    }

    fn remote_address(&mut self, _socket: Resource<TcpSocket>) -> SocketResult<IpSocketAddress> {
        Err(ErrorCode::InvalidState.into())
    }

    fn is_listening(&mut self, _socket: Resource<TcpSocket>) -> wasmtime::Result<bool> {
        Ok(false)
    }

    fn address_family(&mut self, socket: Resource<TcpSocket>) -> wasmtime::Result<IpAddressFamily> {
        Ok(self.socket(&socket)?.family)
    }

    fn set_listen_backlog_size(
        &mut self,
        _socket: Resource<TcpSocket>,
        _value: u64,
    ) -> SocketResult<()> {
        Err(ErrorCode::AccessDenied.into())
    }

    fn keep_alive_enabled(&mut self, _socket: Resource<TcpSocket>) -> SocketResult<bool> {
        Err(ErrorCode::AccessDenied.into())
    }

    fn set_keep_alive_enabled(
        &mut self,
        _socket: Resource<TcpSocket>,
        _value: bool,
    ) -> SocketResult<()> {
        Err(ErrorCode::AccessDenied.into())
    }

    fn keep_alive_idle_time(&mut self, _socket: Resource<TcpSocket>) -> SocketResult<u64> {
        Err(ErrorCode::AccessDenied.into())
    }

    fn set_keep_alive_idle_time(
        &mut self,
        _socket: Resource<TcpSocket>,
        _value: u64,
    ) -> SocketResult<()> {
        Err(ErrorCode::AccessDenied.into())
    }

    fn keep_alive_interval(&mut self, _socket: Resource<TcpSocket>) -> SocketResult<u64> {
        Err(ErrorCode::AccessDenied.into())
    }

    fn set_keep_alive_interval(
        &mut self,
        _socket: Resource<TcpSocket>,
        _value: u64,
    ) -> SocketResult<()> {
        Err(ErrorCode::AccessDenied.into())
    }

    fn keep_alive_count(&mut self, _socket: Resource<TcpSocket>) -> SocketResult<u32> {
        Err(ErrorCode::AccessDenied.into())
    }

    fn set_keep_alive_count(
        &mut self,
        _socket: Resource<TcpSocket>,
        _value: u32,
    ) -> SocketResult<()> {
        Err(ErrorCode::AccessDenied.into())
    }

    fn hop_limit(&mut self, _socket: Resource<TcpSocket>) -> SocketResult<u8> {
        Err(ErrorCode::AccessDenied.into())
    }

    fn set_hop_limit(&mut self, _socket: Resource<TcpSocket>, _value: u8) -> SocketResult<()> {
        Err(ErrorCode::AccessDenied.into())
    }

    fn receive_buffer_size(&mut self, _socket: Resource<TcpSocket>) -> SocketResult<u64> {
        Err(ErrorCode::AccessDenied.into())
    }

    fn set_receive_buffer_size(
        &mut self,
        _socket: Resource<TcpSocket>,
        _value: u64,
    ) -> SocketResult<()> {
        Err(ErrorCode::AccessDenied.into())
    }

    fn send_buffer_size(&mut self, _socket: Resource<TcpSocket>) -> SocketResult<u64> {
        Err(ErrorCode::AccessDenied.into())
    }

    fn set_send_buffer_size(
        &mut self,
        _socket: Resource<TcpSocket>,
        _value: u64,
    ) -> SocketResult<()> {
        Err(ErrorCode::AccessDenied.into())
    }

    fn subscribe(
        &mut self,
        socket: Resource<TcpSocket>,
    ) -> wasmtime::Result<Resource<DynPollable>> {
        self.subscribe_socket(socket)
    }

    fn shutdown(&mut self, _socket: Resource<TcpSocket>, _how: ShutdownType) -> SocketResult<()> {
        Err(ErrorCode::InvalidState.into())
    }

    fn drop(&mut self, socket: Resource<TcpSocket>) -> wasmtime::Result<()> {
        self.drop_socket(socket)
    }
}

impl udp::Host for DeniedSockets<'_> {}

impl udp::HostUdpSocket for DeniedSockets<'_> {
    async fn start_bind(
        &mut self,
        _socket: Resource<UdpSocket>,
        network: Resource<Network>,
        address: IpSocketAddress,
    ) -> SocketResult<()> {
        self.deny(&network, NetworkUse::UdpBind(address.into()))
    }

    fn finish_bind(&mut self, _socket: Resource<UdpSocket>) -> SocketResult<()> {
        Err(ErrorCode::NotInProgress.into())
    }

    async fn stream(
        &mut self,
        _socket: Resource<UdpSocket>,
        remote: Option<IpSocketAddress>,
    ) -> SocketResult<(
        Resource<IncomingDatagramStream>,
        Resource<OutgoingDatagramStream>,
    )> {
        self.attempts
            .deny(NetworkUse::UdpExchange(remote.map(Into::into)));
        Err(ErrorCode::AccessDenied.into())
    }

    fn local_address(&mut self, _socket: Resource<UdpSocket>) -> SocketResult<IpSocketAddress> {
        Err(ErrorCode::InvalidState.into())
    }

    fn remote_address(&mut self, _socket: Resource<UdpSocket>) -> SocketResult<IpSocketAddress> {
        Err(ErrorCode::InvalidState.into())
    }

    fn address_family(&mut self, socket: Resource<UdpSocket>) -> wasmtime::Result<IpAddressFamily> {
        Ok(self.socket(&socket)?.family)
    }

    fn unicast_hop_limit(&mut self, _socket: Resource<UdpSocket>) -> SocketResult<u8> {
        Err(ErrorCode::AccessDenied.into())
    }

    fn set_unicast_hop_limit(
        &mut self,
        _socket: Resource<UdpSocket>,
        _value: u8,
    ) -> SocketResult<()> {
        Err(ErrorCode::AccessDenied.into())
    }

    fn receive_buffer_size(&mut self, _socket: Resource<UdpSocket>) -> SocketResult<u64> {
        Err(ErrorCode::AccessDenied.into())
    }

    fn set_receive_buffer_size(
        &mut self,
        _socket: Resource<UdpSocket>,
        _value: u64,
    ) -> SocketResult<()> {
        Err(ErrorCode::AccessDenied.into())
    }

    fn send_buffer_size(&mut self, _socket: Resource<UdpSocket>) -> SocketResult<u64> {
        Err(ErrorCode::AccessDenied.into())
    }

    fn set_send_buffer_size(
        &mut self,
        _socket: Resource<UdpSocket>,
        _value: u64,
    ) -> SocketResult<()> {
        Err(ErrorCode::AccessDenied.into())
    }

    fn subscribe(
        &mut self,
        socket: Resource<UdpSocket>,
    ) -> wasmtime::Result<Resource<DynPollable>> {
        self.subscribe_socket(socket)
    }

    fn drop(&mut self, socket: Resource<UdpSocket>) -> wasmtime::Result<()> {
        self.drop_socket(socket)
    }
}

/// Datagram streams and address streams are never created (the calls that would create them
/// are denied), so the guest can hold none; their functions fail like those of a socket.
impl udp::HostIncomingDatagramStream for DeniedSockets<'_> {
    fn receive(
        &mut self,
        _stream: Resource<IncomingDatagramStream>,
        _max_results: u64,
    ) -> SocketResult<Vec<IncomingDatagram>> {
        Err(ErrorCode::InvalidState.into())
    }

    fn subscribe(
        &mut self,
        stream: Resource<IncomingDatagramStream>,
    ) -> wasmtime::Result<Resource<DynPollable>> {
        never_created(stream)
    }

    fn drop(&mut self, stream: Resource<IncomingDatagramStream>) -> wasmtime::Result<()> {
        never_created(stream)
    }
}

impl udp::HostOutgoingDatagramStream for DeniedSockets<'_> {
    fn check_send(&mut self, _stream: Resource<OutgoingDatagramStream>) -> SocketResult<u64> {
        Err(ErrorCode::InvalidState.into())
    }

    fn send(
        &mut self,
        _stream: Resource<OutgoingDatagramStream>,
        _datagrams: Vec<OutgoingDatagram>,
    ) -> SocketResult<u64> {
        Err(ErrorCode::InvalidState.into())
    }

    fn subscribe(
        &mut self,
        stream: Resource<OutgoingDatagramStream>,
    ) -> wasmtime::Result<Resource<DynPollable>> {
        never_created(stream)
    }

    async fn drop(&mut self, stream: Resource<OutgoingDatagramStream>) -> wasmtime::Result<()> {
        never_created(stream)
    }
}

impl ip_name_lookup::Host for DeniedSockets<'_> {
    fn resolve_addresses(
        &mut self,
        network: Resource<Network>,
        name: String,
    ) -> SocketResult<Resource<ResolveAddressStream>> {
        self.deny(&network, NetworkUse::NameLookup(name))
    }
}

impl ip_name_lookup::HostResolveAddressStream for DeniedSockets<'_> {
    fn resolve_next_address(
        &mut self,
        _stream: Resource<ResolveAddressStream>,
    ) -> SocketResult<Option<IpAddress>> {
        Err(ErrorCode::InvalidState.into())
    }

    fn subscribe(
        &mut self,
        stream: Resource<ResolveAddressStream>,
    ) -> wasmtime::Result<Resource<DynPollable>> {
        never_created(stream)
    }

    fn drop(&mut self, stream: Resource<ResolveAddressStream>) -> wasmtime::Result<()> {
        never_created(stream)
    }
}

/// The guest passed a handle of a kind this host never hands out: a host bug, so a trap.
fn never_created<R: 'static, T>(handle: Resource<R>) -> wasmtime::Result<T> {
    Err(wasmtime::format_err!(
        "no {} is ever created, yet the guest passed handle {}",
        std::any::type_name::<R>(),
        handle.rep()
    ))
}
