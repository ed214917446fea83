//! A download stops at the size its change announced: a service (here a fake on loopback) that sends more bytes
//! than announced, with or without saying so in `Content-Length`, gets the download stopped and discarded; nothing
//! is left at the destination or beside it.

use pactwise_sync::wire::sha256_hex;
use pactwise_sync::{HttpApi, SyncError};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// A one-answer-per-connection HTTP server on loopback that answers every request with `answer`.
async fn fake_service(answer: Vec<u8>) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            let answer = answer.clone();
            tokio::spawn(async move {
                let mut request = Vec::new();
                let mut buf = [0u8; 4096];
                while !request.windows(4).any(|w| w == b"\r\n\r\n") {
                    match stream.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => request.extend_from_slice(&buf[..n]),
                    }
                }
                let _ = stream.write_all(&answer).await;
                let _ = stream.shutdown().await;
            });
        }
    });
    format!("http://{addr}")
}

fn files_in(dir: &std::path::Path) -> Vec<String> {
    std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect()
}

#[tokio::test]
async fn a_service_that_sends_more_than_announced_gets_the_download_stopped_and_discarded() {
    let announced = b"the real file".to_vec();
    let hash = sha256_hex(&announced);
    let oversized = vec![b'x'; 4 * 1024 * 1024];
    let dir = tempfile::tempdir().unwrap();
    let dest = dir.path().join(&hash);

    // Says it is larger than announced.
    let mut with_length = format!("HTTP/1.1 200 OK\r\ncontent-length: {}\r\n\r\n", oversized.len()).into_bytes();
    with_length.extend_from_slice(&oversized);
    let api = HttpApi::new(&fake_service(with_length).await, None).unwrap();
    let err = api.download_blob(&hash, &dest, Some(announced.len() as u64)).await.unwrap_err();
    assert_eq!(err, SyncError::BlobTooLarge { limit: announced.len() as u64 });
    assert!(files_in(dir.path()).is_empty(), "nothing kept: {:?}", files_in(dir.path()));

    // Says nothing about its length and keeps sending until it closes.
    let mut no_length = b"HTTP/1.1 200 OK\r\nconnection: close\r\n\r\n".to_vec();
    no_length.extend_from_slice(&oversized);
    let api = HttpApi::new(&fake_service(no_length).await, None).unwrap();
    let err = api.download_blob(&hash, &dest, Some(announced.len() as u64)).await.unwrap_err();
    assert!(matches!(err, SyncError::BlobTooLarge { .. }), "{err:?}");
    assert!(err.to_string().contains("more than the 13 bytes"), "{err}");
    assert!(files_in(dir.path()).is_empty(), "nothing kept: {:?}", files_in(dir.path()));

    // The announced size itself is accepted.
    let mut exact = format!("HTTP/1.1 200 OK\r\ncontent-length: {}\r\n\r\n", announced.len()).into_bytes();
    exact.extend_from_slice(&announced);
    let api = HttpApi::new(&fake_service(exact).await, None).unwrap();
    assert_eq!(api.download_blob(&hash, &dest, Some(announced.len() as u64)).await.unwrap(), 13);
    assert_eq!(std::fs::read(&dest).unwrap(), announced);
}

#[tokio::test]
async fn without_an_announced_size_the_services_own_limit_caps_the_download() {
    // A response that claims more than the service may ever store is refused before a byte is written.
    let hash = sha256_hex(b"whatever");
    let claim = pactwise_sync::wire::MAX_BLOB_BYTES + 1;
    let answer = format!("HTTP/1.1 200 OK\r\ncontent-length: {claim}\r\n\r\nxxxx").into_bytes();
    let api = HttpApi::new(&fake_service(answer).await, None).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let err = api.download_blob(&hash, &dir.path().join("f"), None).await.unwrap_err();
    assert_eq!(err, SyncError::BlobTooLarge { limit: pactwise_sync::wire::MAX_BLOB_BYTES });
    assert!(files_in(dir.path()).is_empty());
}
