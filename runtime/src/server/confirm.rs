//! `--confirm destructive|writes|none`: the user's consent before a call is sent, asked the MCP
//! way (elicitation), never taken from the model.
//!
//! - 2025-11-25 clients that declared the `elicitation` capability (form mode) get an
//!   `elicitation/create` request while the call waits.
//! - 2026-07-28 clients get an `input_required` result (multi round-trip requests, SEP-2322):
//!   an elicitation to fulfil and a sealed `requestState`; the call is sent when the client
//!   retries it with the user's acceptance. The state is HMAC-sealed and bound to the tool, a
//!   digest of its arguments and the caller's credentials, and expires after [`STATE_TTL`]: a
//!   client cannot forge consent, move it to other arguments or another caller, or keep it.
//!   Replays of the same call with the same consent are possible within the expiry (the revision
//!   leaves single use to server-side state, which a stateless server does not keep).
//! - A client without the capability: 2025-era, a tool error saying why nothing was sent;
//!   2026-era, `MissingRequiredClientCapability` (-32021), as the revision requires.
//!
//! - With `--tasks`, a client that declared the tasks extension (SEP-2663) calling a tool that
//!   may become a task (its `x-mcp-task` is not `none`) gets a task at once, `input_required`
//!   with the same question in its `inputRequests` (key `confirm`); the call is sent when the
//!   client answers it with `tasks/update` (see `server::tasks`). The pending call lives in the
//!   sealed task record, never with the client, bound to the task's owner; the first answer
//!   claims it (a replay finds nothing outstanding), within [`STATE_TTL`] and the task's TTL.
//!
//! A declined or cancelled confirmation sends nothing. No argument (whatever its name) stands in
//! for the user's answer: only the client's elicitation result does.

use std::time::Duration;

use rmcp::model::{
    CallToolResponse, CallToolResult, ClientCapabilities, ContentBlock, ElicitRequest,
    ElicitRequestParams, ElicitResult, ElicitationAction, ElicitationCapability, InputRequest,
    InputRequests, InputRequiredResult, InputResponses, RequestStateCodec, SealOptions,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer};
use serde_json::{Map, Value, json};

use openapi_mcp_toolset::model::ToolDef;

/// Which calls need the user's consent before they are sent.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
pub enum Confirm {
    /// None: every call is sent (the default).
    #[default]
    None,
    /// Tools whose annotations say destructive (DELETE, and PUT unless the spec says otherwise).
    Destructive,
    /// Every tool that is not read-only (POST, PUT, PATCH, DELETE).
    Writes,
}

impl Confirm {
    /// Whether a call of `def` needs the user's consent under this policy.
    pub fn applies_to(self, def: &ToolDef) -> bool {
        let ann = def.tool().annotations.as_ref();
        match self {
            Confirm::None => false,
            // Unset hints take the MCP defaults: not read-only, destructive.
            Confirm::Destructive => {
                !ann.and_then(|a| a.read_only_hint).unwrap_or(false)
                    && ann.and_then(|a| a.destructive_hint).unwrap_or(true)
            }
            Confirm::Writes => !ann.and_then(|a| a.read_only_hint).unwrap_or(false),
        }
    }
}

/// How long a 2026-era confirmation stays valid.
pub const STATE_TTL: Duration = Duration::from_secs(600);
/// How long a 2025-era `elicitation/create` waits for the user.
pub const ASK_TIMEOUT: Duration = Duration::from_secs(600);
/// The key of the confirmation in `inputRequests` / `inputResponses`.
pub(crate) const KEY: &str = "confirm";

/// The confirmation gate of a server.
pub struct Confirmer {
    policy: Confirm,
    codec: RequestStateCodec,
}

impl std::fmt::Debug for Confirmer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Confirmer")
            .field("policy", &self.policy)
            .finish_non_exhaustive()
    }
}

/// What the gate decided for one call.
pub enum Gate {
    /// Send the call.
    Send,
    /// Answer with this instead (the question, or why nothing was sent).
    Answer(CallToolResponse),
    /// A protocol error (tampered state, a missing client capability).
    Refuse(ErrorData),
}

/// The MRTR fields of a `tools/call` retry.
#[derive(Default)]
pub struct Retry {
    pub input_responses: Option<InputResponses>,
    pub request_state: Option<String>,
}

impl Confirmer {
    /// The gate for `policy`, sealing with `key` (at least 32 bytes; servers behind a load
    /// balancer share one, see `OPENAPI_MCP_CONFIRM_KEY`) or a key made for this process.
    pub fn new(
        policy: Confirm,
        key: Option<&[u8]>,
    ) -> Result<Self, rmcp::model::RequestStateError> {
        let key = match key {
            Some(k) => k.to_vec(),
            None => {
                let mut k = vec![0u8; 32];
                getrandom::fill(&mut k).map_err(|_| {
                    rmcp::model::RequestStateError::KeyTooShort {
                        minimum: 32,
                        actual: 0,
                    }
                })?;
                k
            }
        };
        Ok(Self {
            policy,
            codec: RequestStateCodec::try_new(key)?,
        })
    }

    pub fn policy(&self) -> Confirm {
        self.policy
    }

    /// Decides whether the call of `def` with `args` may be sent now.
    pub async fn gate(
        &self,
        def: &ToolDef,
        args: &Map<String, Value>,
        retry: &Retry,
        context: &RequestContext<RoleServer>,
    ) -> Gate {
        if !self.policy.applies_to(def) {
            return Gate::Send;
        }
        let modern = context
            .protocol_version()
            .is_some_and(|v| !v.has_initialize());
        let can_ask = context
            .client_capabilities()
            .as_ref()
            .is_some_and(supports_form_elicitation);
        let question = question(def, args);
        if modern {
            return self.gate_modern(def, args, retry, context, can_ask, question);
        }
        if !can_ask {
            return Gate::Answer(refused(format!(
                "`{}` needs the user's confirmation before it is sent (the server runs with --confirm {}), and this client cannot ask the user (it did not declare the elicitation capability). Nothing was sent to the API.",
                def.name(),
                self.policy_name()
            )));
        }
        let params = match elicit_params(&question) {
            Ok(p) => p,
            Err(e) => return Gate::Refuse(e),
        };
        match context
            .peer
            .create_elicitation_with_timeout(params, Some(ASK_TIMEOUT))
            .await
        {
            Ok(answer) => decide(def, &answer),
            Err(e) => Gate::Answer(refused(format!(
                "`{}` needs the user's confirmation, and asking failed ({e}). Nothing was sent to the API.",
                def.name()
            ))),
        }
    }

    fn gate_modern(
        &self,
        def: &ToolDef,
        args: &Map<String, Value>,
        retry: &Retry,
        context: &RequestContext<RoleServer>,
        can_ask: bool,
        question: String,
    ) -> Gate {
        let binding = binding(def, args, context);
        if let Some(state) = &retry.request_state {
            if self.codec.open_with(state, &binding).is_err() {
                return Gate::Refuse(ErrorData::invalid_params(
                    "requestState failed verification: it was changed, has expired, or belongs to another call (other arguments or caller); call again without it",
                    None,
                ));
            }
            let answer = retry
                .input_responses
                .as_ref()
                .and_then(|r| r.get(KEY))
                .and_then(|v| serde_json::from_value::<ElicitResult>(v.clone()).ok());
            if let Some(answer) = answer {
                return decide(def, &answer);
            }
            // The state is genuine but the answer is missing: ask again (the revision's SHOULD).
        }
        if !can_ask {
            let mut required = ClientCapabilities::default();
            required.elicitation = Some(ElicitationCapability::default());
            return Gate::Refuse(ErrorData::missing_required_client_capability(required));
        }
        let params = match elicit_params(&question) {
            Ok(p) => p,
            Err(e) => return Gate::Refuse(e),
        };
        let mut requests = InputRequests::new();
        requests.insert(
            KEY.to_string(),
            InputRequest::Elicitation(ElicitRequest::new(params)),
        );
        let state = self.codec.seal_with(
            b"confirm",
            &SealOptions::new().associated_data(&binding).ttl(STATE_TTL),
        );
        Gate::Answer(CallToolResponse::InputRequired(InputRequiredResult::new(
            Some(requests),
            Some(state),
        )))
    }

    fn policy_name(&self) -> &'static str {
        match self.policy {
            Confirm::None => "none",
            Confirm::Destructive => "destructive",
            Confirm::Writes => "writes",
        }
    }
}

/// Whether the client of `context` can be asked (form-mode elicitation).
pub(crate) fn can_ask(context: &RequestContext<RoleServer>) -> bool {
    context
        .client_capabilities()
        .as_ref()
        .is_some_and(supports_form_elicitation)
}

/// The confirmation of a call of `def` with `args`, as the `inputRequests` of a task.
pub(crate) fn input_requests(
    def: &ToolDef,
    args: &Map<String, Value>,
) -> Result<InputRequests, ErrorData> {
    let params = elicit_params(&question(def, args))?;
    let mut requests = InputRequests::new();
    requests.insert(
        KEY.to_string(),
        InputRequest::Elicitation(ElicitRequest::new(params)),
    );
    Ok(requests)
}

/// Whether `v` is an answer to the confirmation (an elicitation result).
pub(crate) fn is_answer(v: &Value) -> bool {
    serde_json::from_value::<ElicitResult>(v.clone()).is_ok()
}

/// What the user's `answer` to the confirmation of `tool` means: `None` send the call, else the
/// tool error to give instead (declined, cancelled, not confirmed, or no answer at all).
pub(crate) fn refusal(tool: &str, answer: &Value) -> Option<CallToolResult> {
    let answer = match serde_json::from_value::<ElicitResult>(answer.clone()) {
        Ok(a) => a,
        Err(_) => ElicitResult::new(ElicitationAction::Cancel),
    };
    match decide_for(tool, &answer) {
        Gate::Send => None,
        Gate::Answer(CallToolResponse::Complete(r)) => Some(r),
        _ => Some(CallToolResult::error(vec![ContentBlock::text(format!(
            "`{tool}` was not confirmed. Nothing was sent to the API."
        ))])),
    }
}

/// Form mode is what the confirmation uses; an empty `elicitation` object means form mode (the
/// 2025-06-18 shape).
fn supports_form_elicitation(c: &ClientCapabilities) -> bool {
    match &c.elicitation {
        None => false,
        Some(e) => {
            let v = serde_json::to_value(e).unwrap_or(Value::Null);
            v.get("form").is_some() || v.get("url").is_none()
        }
    }
}

/// What the user is asked: the tool, the HTTP request it sends, and the arguments.
fn question(def: &ToolDef, args: &Map<String, Value>) -> String {
    let route = &def.route;
    let shown: Vec<String> = args
        .iter()
        .map(|(k, v)| {
            let v = v.to_string();
            let v: String = if v.chars().count() > 80 {
                v.chars().take(80).chain(['…']).collect()
            } else {
                v
            };
            format!("{k} = {v}")
        })
        .take(12)
        .collect();
    let title = def
        .tool()
        .title
        .clone()
        .unwrap_or_else(|| def.name().to_string());
    let mut q = format!(
        "Allow \"{title}\"? It sends {} {} to the API",
        route.method.as_str(),
        route.path
    );
    if shown.is_empty() {
        q.push('.');
    } else {
        q.push_str(" with ");
        q.push_str(&shown.join(", "));
        if args.len() > shown.len() {
            q.push_str(&format!(" and {} more", args.len() - shown.len()));
        }
        q.push('.');
    }
    q
}

fn elicit_params(question: &str) -> Result<ElicitRequestParams, ErrorData> {
    serde_json::from_value(json!({
        "mode": "form",
        "message": question,
        "requestedSchema": {
            "type": "object",
            "properties": {
                "confirm": {
                    "type": "boolean",
                    "title": "Send this request",
                    "description": "Yes sends it to the API; no sends nothing.",
                    "default": false
                }
            },
            "required": ["confirm"]
        }
    }))
    .map_err(|e| ErrorData::internal_error(format!("confirmation form: {e}"), None))
}

/// The user's answer: only an acceptance with `confirm: true` sends the call.
fn decide(def: &ToolDef, answer: &ElicitResult) -> Gate {
    decide_for(def.name(), answer)
}

fn decide_for(tool: &str, answer: &ElicitResult) -> Gate {
    let yes = matches!(answer.action, ElicitationAction::Accept)
        && answer
            .content
            .as_ref()
            .and_then(|c| c.get(KEY))
            .and_then(Value::as_bool)
            == Some(true);
    if yes {
        return Gate::Send;
    }
    let how = match answer.action {
        ElicitationAction::Decline => "declined",
        ElicitationAction::Cancel => "cancelled",
        _ => "did not confirm",
    };
    Gate::Answer(refused(format!(
        "The user {how} `{tool}`. Nothing was sent to the API; do not retry unless the user asks."
    )))
}

fn refused(text: String) -> CallToolResponse {
    CallToolResult::error(vec![ContentBlock::text(text)]).into()
}

/// What a sealed confirmation is bound to: the tool, its arguments (keys sorted, so a client
/// that reorders them on the retry still matches) and the credentials the caller presented. It
/// is mixed into the HMAC, never stored in the state, so it can be as long as it is.
fn binding(
    def: &ToolDef,
    args: &Map<String, Value>,
    context: &RequestContext<RoleServer>,
) -> Vec<u8> {
    let mut out = format!("openapi-mcp/confirm/v1\n{}\n", def.name()).into_bytes();
    canonical(&Value::Object(args.clone()), &mut out);
    out.push(b'\n');
    if let Some(auth) = context
        .extensions
        .get::<http::request::Parts>()
        .and_then(|p| p.headers.get(http::header::AUTHORIZATION))
    {
        out.extend_from_slice(auth.as_bytes());
    }
    out
}

/// JSON text with object keys in sorted order.
fn canonical(v: &Value, out: &mut Vec<u8>) {
    match v {
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            out.push(b'{');
            for (i, k) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                out.extend_from_slice(Value::String(k.clone()).to_string().as_bytes());
                out.push(b':');
                canonical(&m[k], out);
            }
            out.push(b'}');
        }
        Value::Array(a) => {
            out.push(b'[');
            for (i, x) in a.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                canonical(x, out);
            }
            out.push(b']');
        }
        other => out.extend_from_slice(other.to_string().as_bytes()),
    }
}
