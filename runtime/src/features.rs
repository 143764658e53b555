//! The runtime's optional parts (cargo features of `openapi-mcp-runtime`): their names, whether
//! this build has each, and what a server built without one says. Which serving option needs
//! which part, and the start-up check, are serving's (`serve::features`); the call path reads
//! this too (`--mode code` in a build without `code`).

/// An optional part of the runtime: a cargo feature of `openapi-mcp-runtime`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Feature {
    /// Streamable HTTP (`--transport http`): the axum/hyper server, sessions, the HTTP guards.
    Http,
    /// `--mode code`: scripts in the embedded QuickJS sandbox.
    Code,
    /// Prometheus metrics (`--metrics-listen`).
    Metrics,
    /// OpenTelemetry traces (the `OTEL_EXPORTER_OTLP_*` variables).
    Otel,
    /// `--task-store sqlite:PATH` (SQLite compiled in).
    Sqlite,
    /// `--task-store redis://…`.
    Redis,
    /// `--task-store postgres://…`.
    Postgres,
}

impl Feature {
    /// Every optional part.
    pub const ALL: [Feature; 7] = [
        Feature::Http,
        Feature::Code,
        Feature::Metrics,
        Feature::Otel,
        Feature::Sqlite,
        Feature::Redis,
        Feature::Postgres,
    ];

    /// The cargo feature's name.
    pub fn name(self) -> &'static str {
        match self {
            Feature::Http => "http",
            Feature::Code => "code",
            Feature::Metrics => "metrics",
            Feature::Otel => "otel",
            Feature::Sqlite => "sqlite",
            Feature::Redis => "redis",
            Feature::Postgres => "postgres",
        }
    }

    /// Whether this build has it.
    pub fn enabled(self) -> bool {
        match self {
            Feature::Http => cfg!(feature = "http"),
            Feature::Code => cfg!(feature = "code"),
            Feature::Metrics => cfg!(feature = "metrics"),
            Feature::Otel => cfg!(feature = "otel"),
            Feature::Sqlite => cfg!(feature = "sqlite"),
            Feature::Redis => cfg!(feature = "redis"),
            Feature::Postgres => cfg!(feature = "postgres"),
        }
    }

    /// What a server built without it says of `option` (an option as given, e.g.
    /// `--mode code`).
    pub fn missing(self, option: &str) -> String {
        let name = self.name();
        format!(
            "{option}: this server was built without the `{name}` feature (regenerate with `openapi-mcp generate --features {name}`, or build with the runtime's `{name}` feature)"
        )
    }
}
