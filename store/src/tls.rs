//! rustls client configurations for the shared stores (`rediss://`, PostgreSQL `sslmode`).

use std::path::Path;

/// The TLS client configuration for `rediss://`: the CA certificates of `ca` (PEM) only, or
/// the platform's roots.
pub(crate) fn redis_tls_config(ca: Option<&Path>) -> Result<rustls::ClientConfig, String> {
    let provider = std::sync::Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let builder = rustls::ClientConfig::builder_with_provider(std::sync::Arc::clone(&provider))
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("--oauth-store rediss://: TLS: {e}"))?;
    let Some(ca) = ca else {
        let verifier = rustls_platform_verifier::Verifier::new(provider)
            .map_err(|e| format!("--oauth-store rediss://: the platform's CA certificates: {e}"))?;
        return Ok(builder
            .dangerous()
            .with_custom_certificate_verifier(std::sync::Arc::new(verifier))
            .with_no_client_auth());
    };
    use rustls::pki_types::{CertificateDer, pem::PemObject as _};
    let bad =
        |e: &dyn std::fmt::Display| format!("--oauth-store rediss://…?ca={}: {e}", ca.display());
    let mut roots = rustls::RootCertStore::empty();
    for cert in CertificateDer::pem_file_iter(ca).map_err(|e| bad(&e))? {
        roots
            .add(cert.map_err(|e| bad(&e))?)
            .map_err(|e| bad(&format!("not a CA certificate: {e}")))?;
    }
    if roots.is_empty() {
        return Err(bad(&"no PEM certificate in it"));
    }
    Ok(builder.with_root_certificates(roots).with_no_client_auth())
}
