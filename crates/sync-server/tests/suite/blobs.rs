//! Files travel content-addressed and hash-verified; a broken download resumes from where it stopped.

use crate::common::*;
use pactwise_domain::Role;
use pactwise_sync::blob::partial_path;
use pactwise_sync::wire::sha256_hex;
use pactwise_sync::{DeviceToken, HttpApi, SyncError};

fn bytes(n: usize) -> Vec<u8> {
    (0..n).map(|i| (i * 31 % 251) as u8).collect()
}

async fn a_file_uploads_once_and_downloads_whole_and_verified(backend: Backend) {
    let fresh = fresh(backend);
    let clock = fixed_clock();
    let a = org(fresh.storage.as_ref(), clock.as_ref(), "alpha", &[Role::Reviewer]);
    let server = TestServer::start(fresh.storage.clone(), clock.clone(), generous()).await;
    let api = HttpApi::new(&server.endpoint, Some(DeviceToken::new(&a.tokens[0]))).unwrap();
    let data = bytes(300_000);
    let hash = api.upload_blob(data.clone()).await.unwrap();
    assert_eq!(hash, sha256_hex(&data));
    assert_eq!(api.upload_blob(data.clone()).await.unwrap(), hash, "uploading again is a no-op");
    assert_eq!(counts(fresh.storage.as_ref()).blobs, 1);
    let dir = tempfile::tempdir().unwrap();
    let dest = dir.path().join("contract.pdf");
    assert_eq!(api.download_blob(&hash, &dest, None).await.unwrap(), 300_000);
    assert_eq!(std::fs::read(&dest).unwrap(), data);
    assert!(!partial_path(&dest).exists());
}

async fn a_broken_download_resumes_from_the_bytes_already_there(backend: Backend) {
    let fresh = fresh(backend);
    let clock = fixed_clock();
    let a = org(fresh.storage.as_ref(), clock.as_ref(), "alpha", &[Role::Reviewer]);
    let server = TestServer::start(fresh.storage.clone(), clock.clone(), generous()).await;
    let api = HttpApi::new(&server.endpoint, Some(DeviceToken::new(&a.tokens[0]))).unwrap();
    let data = bytes(200_000);
    let hash = api.upload_blob(data.clone()).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let dest = dir.path().join("scan.tiff");
    // A download that broke after 123,456 bytes left them in the partial file.
    std::fs::write(partial_path(&dest), &data[..123_456]).unwrap();
    let fetched = api.download_blob(&hash, &dest, None).await.unwrap();
    assert_eq!(fetched, 200_000 - 123_456, "only the rest was fetched");
    assert_eq!(std::fs::read(&dest).unwrap(), data);
    let served = server.state.metrics().blob_bytes_out.load(std::sync::atomic::Ordering::Relaxed);
    assert_eq!(served, 200_000 - 123_456);
}

/// A server that answers a download with the headers of the whole file, sends the first `cut` bytes and drops the
/// connection: the way a train's Wi-Fi ends a transfer.
async fn breaking_server(data: Vec<u8>, cut: usize) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        if let Ok((mut socket, _)) = listener.accept().await {
            // Read the whole request first: closing with unread bytes would reset the connection and could drop
            // the bytes already sent.
            let mut request = Vec::new();
            let mut buf = [0u8; 1024];
            while !request.windows(4).any(|w| w == b"\r\n\r\n") {
                match socket.read(&mut buf).await {
                    Ok(0) | Err(_) => break,
                    Ok(n) => request.extend_from_slice(&buf[..n]),
                }
            }
            let head = format!(
                "HTTP/1.1 200 OK\r\ncontent-type: application/octet-stream\r\ncontent-length: {}\r\n\r\n",
                data.len()
            );
            let _ = socket.write_all(head.as_bytes()).await;
            let _ = socket.write_all(&data[..cut]).await;
            let _ = socket.flush().await;
            // Dropping the socket here ends the transfer early.
        }
    });
    format!("http://{addr}")
}

async fn a_download_cut_off_mid_transfer_keeps_its_bytes_and_the_next_attempt_fetches_only_the_rest(backend: Backend) {
    let fresh = fresh(backend);
    let clock = fixed_clock();
    let a = org(fresh.storage.as_ref(), clock.as_ref(), "alpha", &[Role::Reviewer]);
    let server = TestServer::start(fresh.storage.clone(), clock.clone(), generous()).await;
    let api = HttpApi::new(&server.endpoint, Some(DeviceToken::new(&a.tokens[0]))).unwrap();
    let data = bytes(400_000);
    let hash = api.upload_blob(data.clone()).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let dest = dir.path().join("contract.pdf");
    let broken =
        HttpApi::new(&breaking_server(data.clone(), 150_000).await, Some(DeviceToken::new(&a.tokens[0]))).unwrap();
    let err = broken.download_blob(&hash, &dest, None).await.unwrap_err();
    assert!(matches!(err, SyncError::Unreachable(_)), "{err:?}");
    assert!(!dest.exists(), "nothing unverified appears at the destination");
    assert_eq!(std::fs::metadata(partial_path(&dest)).unwrap().len(), 150_000, "the bytes that arrived are kept");
    let fetched = api.download_blob(&hash, &dest, None).await.unwrap();
    assert_eq!(fetched, 250_000, "the second attempt asked only for the rest");
    assert_eq!(std::fs::read(&dest).unwrap(), data);
}

async fn a_partial_file_with_wrong_bytes_is_discarded_never_kept(backend: Backend) {
    let fresh = fresh(backend);
    let clock = fixed_clock();
    let a = org(fresh.storage.as_ref(), clock.as_ref(), "alpha", &[Role::Reviewer]);
    let server = TestServer::start(fresh.storage.clone(), clock.clone(), generous()).await;
    let api = HttpApi::new(&server.endpoint, Some(DeviceToken::new(&a.tokens[0]))).unwrap();
    let data = bytes(50_000);
    let hash = api.upload_blob(data.clone()).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let dest = dir.path().join("f");
    std::fs::write(partial_path(&dest), vec![0u8; 10_000]).unwrap();
    let err = api.download_blob(&hash, &dest, None).await.unwrap_err();
    assert!(matches!(err, SyncError::BlobCorrupt { .. }), "{err:?}");
    assert!(!dest.exists() && !partial_path(&dest).exists());
    // The next attempt starts over and succeeds.
    api.download_blob(&hash, &dest, None).await.unwrap();
    assert_eq!(std::fs::read(&dest).unwrap(), data);
    // A partial as long as the file or longer: verified as it is (416 from the server), discarded if wrong.
    let dest2 = dir.path().join("g");
    std::fs::write(partial_path(&dest2), &data).unwrap();
    assert_eq!(api.download_blob(&hash, &dest2, None).await.unwrap(), 0);
    assert_eq!(std::fs::read(&dest2).unwrap(), data);
}

crate::both_backends!(
    a_file_uploads_once_and_downloads_whole_and_verified,
    a_broken_download_resumes_from_the_bytes_already_there,
    a_download_cut_off_mid_transfer_keeps_its_bytes_and_the_next_attempt_fetches_only_the_rest,
    a_partial_file_with_wrong_bytes_is_discarded_never_kept,
);
