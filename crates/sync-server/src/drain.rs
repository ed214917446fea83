//! What the server does with a request body that a handler did not read to the end: a request refused before its
//! body mattered (a wrong content type, a method the route does not take, a body over the size limit, a rate limit).
//!
//! HTTP/1.1 can only carry the next request on a connection once this one's body has been read. Left alone, the
//! connection would be closed under a client that was answered without `connection: close` and may already be
//! sending its next request on it ("connection closed before message completed"). So every request body passes
//! through [`Tracked`], which hands the unread rest back when the handler drops it, and [`finish_unread_bodies`]
//! discards that rest in the background after the answer has gone out, keeping the connection usable. A body too
//! large to be worth reading (over [`DRAIN_CAP`], or of unknown length) is not read: the answer says
//! `connection: close` so that no client reuses the connection.

use axum::body::{Body, Bytes, HttpBody};
use axum::extract::Request;
use axum::http::{HeaderValue, header};
use axum::middleware::Next;
use axum::response::Response;
use http_body::{Frame, SizeHint};
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

/// The most the server reads and discards of a refused body.
pub const DRAIN_CAP: u64 = 16 * 1024 * 1024;
/// How long the server keeps reading a refused body before it gives up and closes the connection.
pub const DRAIN_TIME: Duration = Duration::from_secs(30);

/// The rest of a body that its handler dropped before the end.
type Unread = Arc<Mutex<Option<Body>>>;

/// A request body that hands its unread rest back, when dropped before its end.
struct Tracked {
    inner: Option<Body>,
    unread: Unread,
}

impl HttpBody for Tracked {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        let this = &mut *self;
        let Some(inner) = this.inner.as_mut() else { return Poll::Ready(None) };
        let polled = Pin::new(inner).poll_frame(cx);
        if matches!(polled, Poll::Ready(None | Some(Err(_)))) {
            // Ended, or broken (nothing left that could be read): nothing to hand back.
            this.inner = None;
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.inner.as_ref().is_none_or(HttpBody::is_end_stream)
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.as_ref().map_or_else(|| SizeHint::with_exact(0), HttpBody::size_hint)
    }
}

impl Drop for Tracked {
    fn drop(&mut self) {
        if let Some(inner) = self.inner.take().filter(|b| !b.is_end_stream()) {
            *self.unread.lock().unwrap_or_else(|e| e.into_inner()) = Some(inner);
        }
    }
}

/// Middleware: track every request body; after the handler answers, discard what it left unread (in the
/// background, so the answer is not held up), or mark the answer `connection: close` when that is not worth it.
pub async fn finish_unread_bodies(request: Request, next: Next) -> Response {
    let unread: Unread = Arc::default();
    let request = request.map(|body| Body::new(Tracked { inner: Some(body), unread: unread.clone() }));
    let mut response = next.run(request).await;
    let rest = unread.lock().unwrap_or_else(|e| e.into_inner()).take();
    if let Some(rest) = rest {
        let worth_reading = rest.size_hint().upper().is_some_and(|n| n <= DRAIN_CAP);
        if worth_reading {
            tokio::spawn(discard(rest));
        } else {
            response.headers_mut().insert(header::CONNECTION, HeaderValue::from_static("close"));
        }
    }
    response
}

/// Read `body` to its end and drop what it carries. Dropping it early (time is up) closes the connection.
async fn discard(mut body: Body) {
    let read_all = async {
        while let Some(frame) = std::future::poll_fn(|cx| Pin::new(&mut body).poll_frame(cx)).await {
            if frame.is_err() {
                return;
            }
        }
    };
    if tokio::time::timeout(DRAIN_TIME, read_all).await.is_err() {
        tracing::debug!("a refused request body was still arriving after {DRAIN_TIME:?}; closing its connection");
    }
}
