//! Accepting connections: plain HTTP (for loopback, or behind a TLS proxy) or TLS served by the service itself
//! (rustls, certificate and key from PEM files), HTTP/1.1 through hyper, graceful shutdown.
//!
//! hyper answers a request it cannot parse (headers too large: 431, URL too long: 414, not HTTP: 400) itself,
//! before any handler runs, with an empty body. [`JsonParseErrors`] sits between hyper and the socket and replaces
//! those automatic answers with the same JSON error every other answer carries (`{"error": {"code", "message"}}`),
//! and closes the connection as hyper would.

use crate::http::AppState;
use crate::router;
use axum::body::Body;
use axum::extract::ConnectInfo;
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use pactwise_domain::ErrorCode;
use pactwise_sync::wire::{ErrorBody, ErrorDetail};
use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::path::Path;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, ready};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tower::ServiceExt;

/// How long a client may take for its TLS handshake.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// Why the TLS certificate or key could not be used.
#[derive(Debug, thiserror::Error)]
pub enum TlsSetupError {
    #[error("cannot read {path}: {reason}")]
    Read { path: String, reason: String },
    #[error("{path} holds no PEM certificate (expected -----BEGIN CERTIFICATE-----)")]
    NoCertificate { path: String },
    #[error("{path} holds no PEM private key (PKCS#8, PKCS#1 or SEC1)")]
    NoKey { path: String },
    #[error("the certificate and the key do not fit together or are not usable: {0}")]
    Unusable(String),
}

/// A rustls server configuration from a PEM certificate chain and a PEM private key.
pub fn load_tls(cert: &Path, key: &Path) -> Result<Arc<rustls::ServerConfig>, TlsSetupError> {
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::{CertificateDer, PrivateKeyDer};
    let read = |path: &Path| {
        std::fs::read(path)
            .map_err(|e| TlsSetupError::Read { path: path.display().to_string(), reason: e.kind().to_string() })
    };
    let cert_pem = read(cert)?;
    let chain: Vec<CertificateDer<'static>> =
        CertificateDer::pem_slice_iter(&cert_pem).filter_map(Result::ok).collect();
    if chain.is_empty() {
        return Err(TlsSetupError::NoCertificate { path: cert.display().to_string() });
    }
    let key_pem = read(key)?;
    let key_der = PrivateKeyDer::from_pem_slice(&key_pem)
        .map_err(|_| TlsSetupError::NoKey { path: key.display().to_string() })?;
    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| TlsSetupError::Unusable(e.to_string()))?
        .with_no_client_auth()
        .with_single_cert(chain, key_der)
        .map_err(|e| TlsSetupError::Unusable(e.to_string()))?;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(Arc::new(config))
}

/// Serve plain HTTP until `shutdown` resolves, then finish the requests in flight and return. For loopback, or
/// behind a TLS proxy.
pub async fn serve(
    listener: tokio::net::TcpListener,
    state: AppState,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> io::Result<()> {
    run(listener, state, None, shutdown).await
}

/// Serve HTTPS with `tls` (see [`load_tls`]) until `shutdown` resolves, then finish the requests in flight.
pub async fn serve_tls(
    listener: tokio::net::TcpListener,
    state: AppState,
    tls: Arc<rustls::ServerConfig>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> io::Result<()> {
    run(listener, state, Some(tokio_rustls::TlsAcceptor::from(tls)), shutdown).await
}

async fn run(
    listener: tokio::net::TcpListener,
    state: AppState,
    tls: Option<tokio_rustls::TlsAcceptor>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> io::Result<()> {
    let app = router(state.clone());
    let (stop, stopped) = tokio::sync::watch::channel(false);
    let mut connections = tokio::task::JoinSet::new();
    // Approval steps past their escalation time are escalated by the service, whether or not anyone syncs.
    let sweeper = {
        let (state, mut stopped) = (state.clone(), stopped.clone());
        tokio::spawn(async move {
            let every = state.0.config.escalation_sweep;
            loop {
                crate::steps::sweep(&state).await;
                tokio::select! {
                    _ = stopped.changed() => break,
                    _ = tokio::time::sleep(every) => {}
                }
            }
        })
    };
    tokio::pin!(shutdown);
    loop {
        let (stream, peer) = tokio::select! {
            _ = &mut shutdown => break,
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(e) => {
                    // Out of file descriptors, say: wait a little instead of spinning.
                    tracing::warn!("accepting a connection failed: {e}");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
        };
        while connections.try_join_next().is_some() {}
        let _ = stream.set_nodelay(true);
        let (app, tls, stopped) = (app.clone(), tls.clone(), stopped.clone());
        connections.spawn(async move {
            match tls {
                None => connection(stream, peer, app, stopped).await,
                Some(acceptor) => match tokio::time::timeout(HANDSHAKE_TIMEOUT, acceptor.accept(stream)).await {
                    Ok(Ok(stream)) => connection(stream, peer, app, stopped).await,
                    Ok(Err(e)) => tracing::debug!(%peer, "TLS handshake failed: {e}"),
                    Err(_) => tracing::debug!(%peer, "TLS handshake timed out"),
                },
            }
        });
    }
    drop(listener);
    // Long polls answer "nothing new" now instead of holding the shutdown up.
    state.notifier().close();
    let _ = stop.send(true);
    let _ = sweeper.await;
    while connections.join_next().await.is_some() {}
    Ok(())
}

async fn connection<S>(stream: S, peer: SocketAddr, app: axum::Router, mut stopped: tokio::sync::watch::Receiver<bool>)
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let service = hyper::service::service_fn(move |mut request: hyper::Request<Incoming>| {
        request.extensions_mut().insert(ConnectInfo(peer));
        app.clone().oneshot(request.map(Body::new))
    });
    let conn = hyper::server::conn::http1::Builder::new()
        .timer(TokioTimer::new())
        .serve_connection(TokioIo::new(JsonParseErrors::new(stream)), service);
    tokio::pin!(conn);
    let mut shutting_down = false;
    loop {
        tokio::select! {
            result = conn.as_mut() => {
                if let Err(e) = result {
                    tracing::trace!(%peer, "connection ended: {e}");
                }
                break;
            }
            _ = stopped.wait_for(|stop| *stop), if !shutting_down => {
                shutting_down = true;
                conn.as_mut().graceful_shutdown();
            }
        }
    }
}

/// The stream under hyper: passes everything through, except that an answer hyper wrote by itself for a request
/// it could not parse (an empty 400, 414 or 431) is replaced with a JSON error.
pub struct JsonParseErrors<S> {
    inner: S,
    /// A replacement answer still to write, and how much of it is written.
    pending: Option<(Vec<u8>, usize)>,
    /// After a replacement, hyper's own bytes are dropped (it closes the connection next).
    replaced: bool,
}

impl<S> JsonParseErrors<S> {
    pub fn new(inner: S) -> Self {
        Self { inner, pending: None, replaced: false }
    }
}

/// If `written` is one of hyper's automatic answers to a request it could not parse, the JSON answer to send
/// instead.
pub fn replace_automatic_answer(written: &[u8]) -> Option<Vec<u8>> {
    let (status, reason, code, message) = if written.starts_with(b"HTTP/1.1 431 ") {
        (
            431,
            "Request Header Fields Too Large",
            ErrorCode::ResourceLimit,
            "the request's headers are too large or too many; send fewer or shorter headers",
        )
    } else if written.starts_with(b"HTTP/1.1 414 ") {
        (414, "URI Too Long", ErrorCode::ResourceLimit, "the request's address (URL) is too long")
    } else if written.starts_with(b"HTTP/1.1 400 ") {
        (400, "Bad Request", ErrorCode::InvalidInput, "the request is not valid HTTP/1.1")
    } else {
        return None;
    };
    let head_end = written.windows(4).position(|w| w == b"\r\n\r\n").unwrap_or(written.len());
    let head = String::from_utf8_lossy(&written[..head_end]).to_ascii_lowercase();
    // Handlers' errors always carry a JSON body; hyper's own answers carry none.
    if head.contains("\r\ncontent-type:") || !head.contains("\r\ncontent-length: 0") {
        return None;
    }
    let body = serde_json::to_vec(&ErrorBody {
        error: ErrorDetail { code: code.as_str().to_string(), message: message.to_string() },
    })
    .unwrap_or_default();
    let mut answer = format!(
        "HTTP/1.1 {status} {reason}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
        body.len()
    )
    .into_bytes();
    answer.extend_from_slice(&body);
    Some(answer)
}

impl<S: AsyncWrite + Unpin> JsonParseErrors<S> {
    fn poll_pending(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        while let Some((bytes, done)) = &mut self.pending {
            if *done >= bytes.len() {
                self.pending = None;
                break;
            }
            let n = ready!(Pin::new(&mut self.inner).poll_write(cx, &bytes[*done..]))?;
            if n == 0 {
                return Poll::Ready(Err(io::ErrorKind::WriteZero.into()));
            }
            *done += n;
        }
        Poll::Ready(Ok(()))
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for JsonParseErrors<S> {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for JsonParseErrors<S> {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        let this = &mut *self;
        ready!(this.poll_pending(cx))?;
        if this.replaced {
            return Poll::Ready(Ok(buf.len()));
        }
        if let Some(answer) = replace_automatic_answer(buf) {
            this.pending = Some((answer, 0));
            this.replaced = true;
            // Start sending now; whatever is left goes out at the next write, flush or shutdown.
            if let Poll::Ready(Err(e)) = this.poll_pending(cx) {
                return Poll::Ready(Err(e));
            }
            return Poll::Ready(Ok(buf.len()));
        }
        Pin::new(&mut this.inner).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        ready!(self.poll_pending(cx))?;
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        ready!(self.poll_pending(cx))?;
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }

    // hyper then hands over each answer's head in one buffer, so it can be recognised.
    fn is_write_vectored(&self) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_hypers_own_empty_parse_error_answers_are_replaced() {
        let auto = b"HTTP/1.1 431 Request Header Fields Too Large\r\ncontent-length: 0\r\ndate: x\r\n\r\n";
        let replaced = String::from_utf8(replace_automatic_answer(auto).unwrap()).unwrap();
        assert!(replaced.starts_with("HTTP/1.1 431 "));
        assert!(replaced.contains("content-type: application/json"));
        assert!(replaced.ends_with(r#""code":"resource_limit","message":"the request's headers are too large or too many; send fewer or shorter headers"}}"#));
        let ours = b"HTTP/1.1 400 Bad Request\r\ncontent-type: application/json\r\ncontent-length: 60\r\n\r\n{}";
        assert_eq!(replace_automatic_answer(ours), None);
        assert_eq!(replace_automatic_answer(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n"), None);
        assert!(replace_automatic_answer(b"HTTP/1.1 414 URI Too Long\r\ncontent-length: 0\r\n\r\n").is_some());
    }
}
