//! The runtime's optional parts (cargo features) as serving sees them: which option needs which
//! part, and the start-up check that refuses an option whose part this server was built without.
//!
//! Every serving option exists in every build (`ServeArgs` is the same struct, so the proxy and
//! every generated server keep one command line); a server built without a part refuses, at
//! start-up, the options that need it, naming the feature to build with.

use super::*;

pub use crate::features::Feature;

impl ServeArgs {
    /// The options given that need an optional part, each with its feature (in the order of
    /// the command line's help). Options left at their defaults need nothing.
    pub fn feature_uses(&self) -> Vec<(Feature, &'static str)> {
        let mut uses = Vec::new();
        if self.transport == Transport::Http {
            uses.push((Feature::Http, "--transport http"));
        }
        if self.mode == Mode::Code {
            uses.push((Feature::Code, "--mode code"));
        }
        if self.metrics_listen.is_some() {
            uses.push((Feature::Metrics, "--metrics-listen"));
        }
        if let Some(store) = self.task_store.as_deref().map(str::trim) {
            if store.starts_with("sqlite:") {
                uses.push((Feature::Sqlite, "--task-store sqlite:…"));
            } else if store.starts_with("redis://") || store.starts_with("rediss://") {
                uses.push((Feature::Redis, "--task-store redis://…"));
            } else if store.starts_with("postgres://") || store.starts_with("postgresql://") {
                uses.push((Feature::Postgres, "--task-store postgres://…"));
            }
        }
        uses
    }

    /// Refuses the first option whose part this server was built without (see [`Feature`]).
    pub fn check_features(&self) -> Result<(), UserError> {
        match self
            .feature_uses()
            .into_iter()
            .find(|(feature, _)| !feature.enabled())
        {
            Some((feature, option)) => Err(UserError::msg(feature.missing(option))),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// Each gated option names its feature; defaults need none.
    #[test]
    fn each_gated_option_names_its_feature() {
        assert!(ServeArgs::default().feature_uses().is_empty());
        let args = ServeArgs {
            transport: Transport::Http,
            mode: Mode::Code,
            metrics_listen: Some(SocketAddr::from(([127, 0, 0, 1], 9090))),
            task_store: Some("rediss://cache:6380/0".into()),
            ..ServeArgs::default()
        };
        let uses: Vec<_> = args.feature_uses().into_iter().map(|(f, _)| f).collect();
        assert_eq!(
            uses,
            [
                Feature::Http,
                Feature::Code,
                Feature::Metrics,
                Feature::Redis
            ]
        );
        for (store, feature) in [
            ("sqlite:/var/lib/t.sqlite3", Feature::Sqlite),
            ("postgresql://u@db/t", Feature::Postgres),
        ] {
            let args = ServeArgs {
                task_store: Some(store.into()),
                ..ServeArgs::default()
            };
            assert_eq!(args.feature_uses()[0].0, feature, "{store}");
        }
        assert_eq!(
            Feature::ALL.map(Feature::enabled),
            [
                cfg!(feature = "http"),
                cfg!(feature = "code"),
                cfg!(feature = "metrics"),
                cfg!(feature = "otel"),
                cfg!(feature = "sqlite"),
                cfg!(feature = "redis"),
                cfg!(feature = "postgres")
            ]
        );
        assert_eq!(
            Feature::Code.missing("--mode code"),
            "--mode code: this server was built without the `code` feature (regenerate with `openapi-mcp generate --features code`, or build with the runtime's `code` feature)"
        );
    }

    /// The HTTP limits' option defaults (defined without the `http` feature too) are the
    /// transport's own.
    #[cfg(feature = "http")]
    #[test]
    fn http_option_defaults_are_the_transports() {
        use crate::http::connections::ConnectionLimits;
        use crate::http::sessions::SessionLimits;
        assert_eq!(DEFAULT_MAX_CONNECTIONS, ConnectionLimits::default().max);
        assert_eq!(DEFAULT_MAX_SESSIONS, SessionLimits::default().max);
        assert_eq!(
            DEFAULT_MAX_SESSIONS_PER_CLIENT,
            SessionLimits::default().per_client
        );
    }

    /// A server built without a part refuses its option at start-up, naming the feature (run
    /// by CI with the runtime's default features off).
    #[cfg(not(all(
        feature = "http",
        feature = "code",
        feature = "metrics",
        feature = "sqlite"
    )))]
    #[test]
    fn a_part_left_out_is_refused_by_name() {
        for (args, option, feature) in [
            (
                ServeArgs {
                    transport: Transport::Http,
                    ..ServeArgs::default()
                },
                "--transport http",
                Feature::Http,
            ),
            (
                ServeArgs {
                    mode: Mode::Code,
                    ..ServeArgs::default()
                },
                "--mode code",
                Feature::Code,
            ),
            (
                ServeArgs {
                    metrics_listen: Some(SocketAddr::from(([127, 0, 0, 1], 0))),
                    ..ServeArgs::default()
                },
                "--metrics-listen",
                Feature::Metrics,
            ),
            (
                ServeArgs {
                    task_store: Some("sqlite:tasks.sqlite3".into()),
                    ..ServeArgs::default()
                },
                "--task-store sqlite:…",
                Feature::Sqlite,
            ),
        ] {
            if feature.enabled() {
                continue;
            }
            let e = args.check_features().unwrap_err().to_string();
            assert_eq!(
                e,
                format!(
                    "{option}: this server was built without the `{0}` feature (regenerate with `openapi-mcp generate --features {0}`, or build with the runtime's `{0}` feature)",
                    feature.name()
                )
            );
        }
        assert!(ServeArgs::default().check_features().is_ok());
    }
}
