//! The serving options each API of a server of several (`apis:`) has its own of: one definition
//! for the CLI's `apis:` entries (their clap ids, read from an entry's matches) and for
//! [`super::serve_apis`] (the API's [`ServeArgs`], and what [`super::check_api_auth`] checks).

use super::*;

/// One API's own serving options (`--base-url`, `--credential-origin`, `--auth`, `--header`,
/// `--upstream-auth`, `--token-exchange-audience`, `--upstream-client-id`,
/// `--oauth-proxy-scheme`); the other serving options are the server's.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ApiOptions {
    /// `--base-url` of this API.
    pub base_url: Option<String>,
    /// `--credential-origin` of this API.
    pub credential_origin: Vec<String>,
    /// `--auth` of this API.
    pub auth: Vec<String>,
    /// `--header` of this API.
    pub header: Vec<String>,
    /// `--upstream-auth` of this API (`None`: the server's, [`ServeArgs::upstream_auth`]).
    pub upstream_auth: Option<UpstreamAuth>,
    /// `--token-exchange-audience` of this API (with `--upstream-auth token-exchange`).
    pub token_exchange_audience: Option<String>,
    /// `--upstream-client-id` of this API (with `upstream-auth: oauth-proxy`): this server's
    /// client id at the API's authorization server; its secret is read from
    /// `OPENAPI_MCP_<API>_UPSTREAM_CLIENT_SECRET`.
    pub upstream_client_id: Option<String>,
    /// `--oauth-proxy-scheme` of this API (with `upstream-auth: oauth-proxy`): the spec's
    /// scheme whose flow is run.
    pub oauth_proxy_scheme: Option<String>,
}

impl ApiOptions {
    /// The [`ServeArgs`] argument ids of the options, in the order of the fields.
    pub const IDS: &'static [&'static str] = &[
        "base_url",
        "credential_origin",
        "auth",
        "header",
        "upstream_auth",
        "token_exchange_audience",
        "upstream_client_id",
        "oauth_proxy_scheme",
    ];

    /// The options that may also be set for the whole server next to `apis:`: there, the
    /// default of the APIs that do not set their own.
    pub const SERVER_DEFAULTS: &'static [&'static str] = &["upstream_auth"];

    /// The options as an `apis:` entry's matches hold them (a command with the [`ServeArgs`]
    /// arguments of [`ApiOptions::IDS`]).
    #[cfg(feature = "cli")]
    pub fn from_matches(matches: &clap::ArgMatches) -> ApiOptions {
        let string = |id: &str| matches.get_one::<String>(id).cloned();
        let strings = |id: &str| -> Vec<String> {
            matches
                .get_many::<String>(id)
                .map(|v| v.cloned().collect())
                .unwrap_or_default()
        };
        ApiOptions {
            base_url: string("base_url"),
            credential_origin: strings("credential_origin"),
            auth: strings("auth"),
            header: strings("header"),
            upstream_auth: matches.get_one::<UpstreamAuth>("upstream_auth").copied(),
            token_exchange_audience: string("token_exchange_audience"),
            upstream_client_id: string("upstream_client_id"),
            oauth_proxy_scheme: string("oauth_proxy_scheme"),
        }
    }

    /// How the API named `name` gets its credentials, for [`check_api_auth`].
    pub fn api_auth<'a>(&self, name: &'a str) -> ApiAuth<'a> {
        ApiAuth {
            name,
            upstream_auth: self.upstream_auth,
            token_exchange_audience: self.token_exchange_audience.is_some(),
            upstream_client_id: self.upstream_client_id.is_some(),
            oauth_proxy_scheme: self.oauth_proxy_scheme.is_some(),
        }
    }

    /// The server's arguments with this API's options, in credential mode `upstream_auth`.
    pub fn serve_args(&self, server: &ServeArgs, upstream_auth: UpstreamAuth) -> ServeArgs {
        ServeArgs {
            base_url: self.base_url.clone(),
            credential_origin: self.credential_origin.clone(),
            auth: self.auth.clone(),
            header: self.header.clone(),
            token_exchange_audience: self.token_exchange_audience.clone(),
            upstream_auth,
            upstream_client_id: self.upstream_client_id.clone(),
            oauth_proxy_scheme: self.oauth_proxy_scheme.clone(),
            ..server.clone()
        }
    }
}

#[cfg(all(test, feature = "cli"))]
mod tests {
    #![allow(clippy::unwrap_used)]
    use clap::{Args, Command, FromArgMatches};

    use super::*;

    /// Every option, as `ServeArgs` parses it.
    const ARGV: &[&str] = &[
        "t",
        "--base-url",
        "https://api.example",
        "--credential-origin",
        "https://files.example",
        "--auth",
        "key=x",
        "--header",
        "X-A: 1",
        "--header",
        "X-B: 2",
        "--upstream-auth",
        "token-exchange",
        "--token-exchange-audience",
        "aud",
        "--upstream-client-id",
        "client",
        "--oauth-proxy-scheme",
        "oauth",
    ];

    #[test]
    fn the_ids_are_serve_args_ids_read_as_serve_args_reads_them() {
        let cmd = ServeArgs::augment_args(Command::new("t"));
        for id in ApiOptions::IDS.iter().chain(ApiOptions::SERVER_DEFAULTS) {
            assert!(
                cmd.get_arguments().any(|a| a.get_id() == *id),
                "`{id}` is not a ServeArgs argument"
            );
        }
        let m = cmd.try_get_matches_from(ARGV).unwrap();
        let server = ServeArgs::from_arg_matches(&m).unwrap();
        let options = ApiOptions::from_matches(&m);
        assert_eq!(
            options,
            ApiOptions {
                base_url: server.base_url.clone(),
                credential_origin: server.credential_origin.clone(),
                auth: server.auth.clone(),
                header: server.header.clone(),
                upstream_auth: Some(server.upstream_auth),
                token_exchange_audience: server.token_exchange_audience.clone(),
                upstream_client_id: server.upstream_client_id.clone(),
                oauth_proxy_scheme: server.oauth_proxy_scheme.clone(),
            }
        );
        // Every field was set: a field left out of `from_matches` would be empty here.
        assert!(options.base_url.is_some() && options.oauth_proxy_scheme.is_some());
        assert_eq!(options.header.len(), 2);
    }

    #[test]
    fn serve_args_take_every_option_and_the_mode() {
        let cmd = ServeArgs::augment_args(Command::new("t"));
        let m = cmd.try_get_matches_from(ARGV).unwrap();
        let options = ApiOptions::from_matches(&m);
        let server = ServeArgs {
            stateless: true,
            ..ServeArgs::default()
        };
        let args = options.serve_args(&server, UpstreamAuth::OAuthProxy);
        assert!(args.stateless, "the server's own options are kept");
        assert_eq!(args.upstream_auth, UpstreamAuth::OAuthProxy);
        assert_eq!(
            ApiOptions {
                base_url: args.base_url,
                credential_origin: args.credential_origin,
                auth: args.auth,
                header: args.header,
                upstream_auth: options.upstream_auth,
                token_exchange_audience: args.token_exchange_audience,
                upstream_client_id: args.upstream_client_id,
                oauth_proxy_scheme: args.oauth_proxy_scheme,
            },
            options
        );
        let auth = options.api_auth("crm");
        assert_eq!(auth.name, "crm");
        assert!(auth.token_exchange_audience && auth.upstream_client_id && auth.oauth_proxy_scheme);
    }
}
