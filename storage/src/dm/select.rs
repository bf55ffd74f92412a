//! The transport a DM store uses, chosen when it opens: TCP, or RDMA when it was requested,
//! is built in (feature `rdma`) and a device is present. When RDMA was requested and cannot
//! be had, the store falls back to TCP and says why in its description (PROFILE's caption),
//! rather than failing or panicking.

use super::protocol::Message;
use super::stats::StatsSnapshot;
use super::tcp::{TcpOptions, TcpTransport};
use super::transport::{Connector, Ticket, Transport};
use super::GlobalAddr;
use crate::error::{Result, StoreError};

/// The transport a session asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TransportKind {
    /// Every call over TCP.
    #[default]
    Tcp,
    /// One-sided verbs over RDMA, two-sided calls over TCP.
    Rdma,
}

impl TransportKind {
    /// Every kind, in display order.
    pub const ALL: [TransportKind; 2] = [TransportKind::Tcp, TransportKind::Rdma];

    /// The kind named `s` (`tcp`, `rdma`; any case).
    pub fn parse(s: &str) -> Option<TransportKind> {
        Self::ALL
            .into_iter()
            .find(|k| k.name().eq_ignore_ascii_case(s.trim()))
    }

    /// Its name in settings and status lines.
    pub fn name(self) -> &'static str {
        match self {
            TransportKind::Tcp => "tcp",
            TransportKind::Rdma => "rdma",
        }
    }
}

/// Why RDMA cannot be used by this process, or `None` when it can.
pub fn rdma_unavailable() -> Option<String> {
    #[cfg(feature = "rdma")]
    {
        if super::rdma::rdma_available() {
            None
        } else {
            Some("no RDMA device on this machine".into())
        }
    }
    #[cfg(not(feature = "rdma"))]
    {
        Some("this build has no RDMA support (build with `--features rdma`)".into())
    }
}

/// A connection of the transport chosen at open.
pub enum DmTransport {
    Tcp(TcpTransport),
    #[cfg(feature = "rdma")]
    Rdma(super::rdma::RdmaTransport),
}

macro_rules! each {
    ($t:expr, $c:ident => $body:expr) => {
        match $t {
            DmTransport::Tcp($c) => $body,
            #[cfg(feature = "rdma")]
            DmTransport::Rdma($c) => $body,
        }
    };
}

impl Transport for DmTransport {
    fn node_id(&self) -> u16 {
        each!(self, c => c.node_id())
    }
    fn node_name(&self) -> &str {
        each!(self, c => c.node_name())
    }
    fn submit(&self, msg: Message) -> Result<Ticket> {
        each!(self, c => c.submit(msg))
    }
    fn stats(&self) -> StatsSnapshot {
        each!(self, c => c.stats())
    }
    fn alloc(&self, size: u64) -> Result<GlobalAddr> {
        each!(self, c => c.alloc(size))
    }
    fn alloc_leased(&self, size: u64) -> Result<GlobalAddr> {
        each!(self, c => c.alloc_leased(size))
    }
    fn free(&self, addr: GlobalAddr) -> Result<()> {
        each!(self, c => c.free(addr))
    }
}

/// Opens connections of the transport chosen once, at construction.
#[derive(Debug, Clone)]
pub struct DmConnector {
    token: String,
    opts: TcpOptions,
    chosen: TransportKind,
    /// Why RDMA was requested and not used.
    fallback: Option<String>,
}

impl DmConnector {
    /// Chooses `requested` when this process can use it, else TCP (remembering why).
    pub fn new(requested: TransportKind, token: String, opts: TcpOptions) -> DmConnector {
        let fallback = match requested {
            TransportKind::Tcp => None,
            TransportKind::Rdma => rdma_unavailable(),
        };
        let chosen = if fallback.is_some() {
            TransportKind::Tcp
        } else {
            requested
        };
        DmConnector {
            token,
            opts,
            chosen,
            fallback,
        }
    }

    /// The transport in use.
    pub fn chosen(&self) -> TransportKind {
        self.chosen
    }

    /// Why RDMA was requested and not used, if it was.
    pub fn fallback(&self) -> Option<&str> {
        self.fallback.as_deref()
    }
}

impl Connector for DmConnector {
    type Transport = DmTransport;

    fn connect(&self, addr: &str) -> Result<DmTransport> {
        match self.chosen {
            TransportKind::Tcp => {
                TcpTransport::connect(addr, &self.token, self.opts).map(DmTransport::Tcp)
            }
            #[cfg(feature = "rdma")]
            TransportKind::Rdma => {
                super::rdma::RdmaTransport::connect(addr, &self.token, self.opts)
                    .map(DmTransport::Rdma)
                    .map_err(|e| match e {
                        StoreError::Remote { node, message } => StoreError::Remote {
                            node,
                            message: format!("{message} (the `rdma` transport was requested; TCP works without a device)"),
                        },
                        e => e,
                    })
            }
            #[cfg(not(feature = "rdma"))]
            TransportKind::Rdma => Err(StoreError::Remote {
                node: addr.to_string(),
                message: "this build has no RDMA support".into(),
            }),
        }
    }

    fn transport_name(&self) -> &'static str {
        self.chosen.name()
    }

    fn describe(&self) -> String {
        match &self.fallback {
            None => self.chosen.name().into(),
            Some(why) => format!(
                "{} (RDMA requested, not available: {why})",
                self.chosen.name()
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_parse_by_name_in_any_case() {
        assert_eq!(TransportKind::parse("RDMA"), Some(TransportKind::Rdma));
        assert_eq!(TransportKind::parse(" tcp "), Some(TransportKind::Tcp));
        assert_eq!(TransportKind::parse("udp"), None);
        assert_eq!(TransportKind::default(), TransportKind::Tcp);
    }

    #[test]
    fn rdma_without_a_device_falls_back_to_tcp_and_says_why() {
        let c = DmConnector::new(TransportKind::Rdma, "t".into(), TcpOptions::default());
        match rdma_unavailable() {
            Some(why) => {
                assert_eq!(c.chosen(), TransportKind::Tcp);
                assert_eq!(c.fallback(), Some(why.as_str()));
                assert!(
                    c.describe().starts_with("tcp (RDMA requested"),
                    "{}",
                    c.describe()
                );
            }
            None => assert_eq!(c.chosen(), TransportKind::Rdma),
        }
        let tcp = DmConnector::new(TransportKind::Tcp, "t".into(), TcpOptions::default());
        assert_eq!((tcp.chosen(), tcp.fallback()), (TransportKind::Tcp, None));
        assert_eq!(tcp.describe(), "tcp");
    }
}
