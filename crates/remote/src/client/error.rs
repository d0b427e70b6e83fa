//! Why a remote component's connection could not be made or was lost: the reason its exit
//! reports (`shown` is the URL without credentials). Must not know the router or the link.

/// Which stream of a Streamable HTTP connection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stream {
    Connection,
    Session(String),
}

impl std::fmt::Display for Stream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Stream::Connection => f.write_str("the connection's stream"),
            Stream::Session(session) => write!(f, "the stream of session {session}"),
        }
    }
}

/// `detail` and `answer` are already worded for a person: a transport error with its causes,
/// or "the server answered STATUS: the start of the body". Cheap to clone: both halves of a
/// connection report the same failure.
#[derive(Debug, Clone, thiserror::Error)]
pub enum ConnectionError {
    #[error("TLS cannot be set up: {0}")]
    Tls(#[source] rustls::Error),
    #[error("cannot set up HTTP for {shown}: {detail}")]
    HttpSetup { shown: String, detail: String },
    /// The URL cannot make a WebSocket request.
    #[error("cannot connect to {shown}: {detail}")]
    Request { shown: String, detail: String },
    #[error("could not connect to {shown}: {detail}")]
    Unreachable { shown: String, detail: String },
    #[error("could not connect to {shown} within {seconds} s")]
    TimedOut { shown: String, seconds: u64 },
    #[error("could not open {stream} at {shown}: {detail}")]
    StreamUnopened {
        stream: Stream,
        shown: String,
        detail: String,
    },
    #[error("{shown} refused {stream}: {answer}")]
    StreamRefused {
        stream: Stream,
        shown: String,
        answer: String,
    },
    /// `what` was refused in a way no later message would get past.
    #[error("was refused by {shown} ({what}): {answer}")]
    Refused {
        shown: String,
        what: &'static str,
        answer: String,
    },
    #[error("the first message to {0} must be initialize")]
    NotInitialized(String),
    #[error("lost its connection ({shown}): {detail}")]
    Lost { shown: String, detail: String },
    #[error("lost its connection ({shown}) reading the initialize answer: {detail}")]
    LostInitializeAnswer { shown: String, detail: String },
    #[error("lost its connection ({shown}): {stream} failed: {detail}")]
    StreamFailed {
        shown: String,
        stream: Stream,
        detail: String,
    },
}
