"""Independent check of the HTTP requests the proxy sends: every tool of a set of OpenAPI 3.x specs
is called once through the official Python MCP SDK client, with arguments generated from the
tool's own inputSchema, and every request the local upstream receives is validated against the
original spec with `openapi-core` (a validator that shares no code with openapi-mcp).

The property checked: arguments the proxy accepts (they passed its inputSchema validation) turn
into a request the API's own spec accepts (path, query, header and cookie parameters with their
styles, the body with its media type, and the security credentials).

Per call, one of:
- `valid`: a request was sent and openapi-core accepts it;
- `invalid`: a request was sent and openapi-core rejects it (a defect, printed with the reason);
- `refused`: nothing was sent, the tool result is an error (generated arguments the proxy's own
  validation rejected: a gap of this generator, counted and the first reasons printed);
- `unsent`: nothing was sent and the result is not an error (a defect).

Exit status 1 when any call is `invalid` or `unsent` and not listed in KNOWN (validator
limitations, each with its reason), else 0.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import copy
import json
import os
import pathlib
import re
import sys
import time
import urllib.parse

import yaml
from mcp import Client, StdioServerParameters
from openapi_core import Config, OpenAPI
from openapi_core.exceptions import OpenAPIError
from openapi_core.testing import MockRequest
from upstream import RecordingUpstream

BASE_PATH = "/vbase/v1"
MAX_TOOLS = 250
# Which slice of each spec's tools is checked: tools[OFFSET:OFFSET + MAX_TOOLS].
OFFSET = int(os.environ.get("VALIDATE_OFFSET", "0"))
MAX_TOOLS = int(os.environ.get("VALIDATE_MAX_TOOLS", str(MAX_TOOLS)))
CALL_TIMEOUT = 15.0

# (spec file name, tool name) -> why openapi-core's verdict is not a proxy defect.
_READONLY_REQUIRED = (
    "a `required` property is readOnly behind a $ref (or allOf); the proxy rightly leaves it out "
    "(OAS: required readOnly properties apply to responses only), openapi-core still requires it"
)
_DISCRIMINATOR = (
    "oneOf/anyOf with a discriminator: openapi-core looks an unmapped value up as a schema name "
    "(`function` -> #/components/schemas/function) and requires the discriminating property even "
    "where the option leaves it optional; with the discriminators removed it accepts the body"
)
_READONLY_PARAM = (
    "openapi-core applies readOnly to parameters (both anyOf branches of the path parameter are "
    "readOnly; its message is hidden under the anyOf)"
)
KNOWN: dict[tuple[str, str], str] = {
    ("cloudflare-api-3.0.json", "cloudflare_dns_firewall_update_dns_firewall_cluster"): _READONLY_REQUIRED,
    ("cloudflare-api-3.0.json", "cloudflare_create_zone_ruleset"): _READONLY_REQUIRED,
    ("cloudflare-api-3.0.json", "cloudflare_update_zone_ruleset"): _READONLY_REQUIRED,
    ("cloudflare-api-3.0.json", "cloudflare_update_zone_entrypoint_ruleset"): _READONLY_REQUIRED,
    ("cloudflare-api-3.0.json", "cloudflare_create_account_ruleset"): _READONLY_REQUIRED,
    ("cloudflare-api-3.0.json", "cloudflare_update_account_ruleset"): _READONLY_REQUIRED,
    ("cloudflare-api-3.0.json", "cloudflare_update_account_entrypoint_ruleset"): _READONLY_REQUIRED,
    ("cloudflare-api-3.0.json", "cloudflare_user_api_tokens_create_token"): _READONLY_REQUIRED,
    ("cloudflare-api-3.0.json", "cloudflare_user_api_tokens_update_token"): _READONLY_REQUIRED,
    ("cloudflare-api-3.0.json", "cloudflare_tunnel_route_create_a_tunnel_route"): _READONLY_REQUIRED,
    ("cloudflare-api-3.0.json", "cloudflare_tunnel_route_create_a_tunnel_route_with_cidr"): _READONLY_REQUIRED,
    ("cloudflare-api-3.0.json", "cloudflare_stream_watermark_profile_create_watermark_prof_3u6rto"): (
        "openapi-core does not cast multipart text parts (`opacity=0`) to numbers"
    ),
    ("cloudflare-api-3.0.json", "cloudflare_accounts_update_account"): _READONLY_REQUIRED,
    ("DigitalOcean-public.v2.yaml", "digitalocean_ssh_keys_get"): _READONLY_PARAM,
    ("DigitalOcean-public.v2.yaml", "digitalocean_ssh_keys_update"): _READONLY_PARAM,
    ("DigitalOcean-public.v2.yaml", "digitalocean_ssh_keys_delete"): _READONLY_PARAM,
    ("box-api-3.0.json", "box_put_metadata_templates_enterprise_security_classifica_jvhwv6"): (
        "path keys that differ only by `#add`/`#update`: openapi-core matches the request to the "
        "other operation (application/json-patch+json); the proxy sent #add's application/json"
    ),
    ("openai-api-3.1.yaml", "openai_create_chat_completion"): _DISCRIMINATOR,
    ("openai-api-3.1.yaml", "openai_create_conversation_items"): _DISCRIMINATOR,
    ("openai-api-3.1.yaml", "openai_accept_realtime_call"): _DISCRIMINATOR,
    ("openai-api-3.1.yaml", "openai_create_response"): _DISCRIMINATOR,
    ("openai-api-3.1.yaml", "openai_create_conversation"): _DISCRIMINATOR,
    ("openai-api-3.1.yaml", "openai_getinputtokencounts"): _DISCRIMINATOR,
    ("openai-api-3.1.yaml", "openai_beta_getinputtokencounts"): _DISCRIMINATOR,
    ("openai-api-3.1.yaml", "openai_beta_create_response"): _DISCRIMINATOR,
    # Fixtures of the request-fidelity classes (#23):
    ("query-and-form-encoding.yaml", "encodings_search"): (
        "a required deepObject parameter whose generated value is an empty object is sent as "
        "`filter=` (OpenAPI's empty value); openapi-core reads deepObject only from `filter[...]` "
        "keys and reports it missing"
    ),
    ("read-only-nested.yaml", "read_create_order"): _READONLY_REQUIRED,
    ("read-only-nested.yaml", "read_import_orders"): _READONLY_REQUIRED,
}


class Upstream(RecordingUpstream):
    """Records every request and answers 200 `{}`."""

    def __init__(self) -> None:
        super().__init__(lambda _rec: (200, {}))


# ------------------------------------------------------------------------- argument generator

FORMATS = {
    "date-time": "2024-01-02T03:04:05Z",
    "date": "2024-01-02",
    "time": "03:04:05Z",
    "email": "someone@example.com",
    "uri": "https://example.com/x",
    "url": "https://example.com/x",
    "uri-reference": "https://example.com/x",
    "uuid": "3fa85f64-5717-4562-b3fc-2c963f66afa6",
    "ipv4": "192.0.2.1",
    "ipv6": "2001:db8::1",
    "hostname": "example.com",
    "byte": base64.b64encode(b"hello").decode(),
    "binary": base64.b64encode(b"hello").decode(),
}


_PATTERNS: dict = {}


def from_pattern(pattern: str, lo: int, hi) -> str | None:
    """The simplest string matching `pattern` (ECMA-ish regex) within the length bounds, found by
    Hypothesis' shrinker (deterministic), or None."""
    key = (pattern, lo, hi)
    if key not in _PATTERNS:
        import re
        import warnings

        from hypothesis import HealthCheck, find, settings
        from hypothesis import strategies as st

        try:
            compiled = re.compile(pattern)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                _PATTERNS[key] = find(
                    st.from_regex(compiled),
                    lambda x: len(x) >= lo and (hi is None or len(x) <= hi) and "\n" not in x,
                    settings=settings(database=None, max_examples=200, suppress_health_check=list(HealthCheck)),
                )
        except Exception:
            _PATTERNS[key] = None
    return _PATTERNS[key]


class Gen:
    def __init__(self, root: dict) -> None:
        self.defs = root.get("$defs", {})

    def resolve(self, s):
        seen = 0
        while isinstance(s, dict) and "$ref" in s and seen < 20:
            name = s["$ref"].rsplit("/", 1)[-1]
            target = self.defs.get(name, {})
            rest = {k: v for k, v in s.items() if k != "$ref"}
            s = {**target, **rest} if isinstance(target, dict) else target
            seen += 1
        return s

    def value(self, s, depth: int = 0, optional: bool = True):
        s = self.resolve(s)
        if s is True or s is None or s == {}:
            return "x"
        if s is False:
            return None
        if "const" in s:
            return s["const"]
        if "enum" in s and s["enum"]:
            non_null = [e for e in s["enum"] if e is not None]
            return non_null[0] if non_null else None
        if "allOf" in s:
            merged: dict = {}
            props: dict = {}
            required: list = []
            for part in s["allOf"]:
                part = self.resolve(part)
                if not isinstance(part, dict):
                    continue
                props.update(part.get("properties", {}))
                required += part.get("required", [])
                for k, v in part.items():
                    if k not in ("properties", "required"):
                        merged.setdefault(k, v)
            rest = {k: v for k, v in s.items() if k != "allOf"}
            merged.update(rest)
            if props:
                merged["properties"] = {**props, **rest.get("properties", {})}
                merged.setdefault("type", "object")
            if required:
                merged["required"] = list(dict.fromkeys(required + rest.get("required", [])))
            return self.value(merged, depth, optional)
        for key in ("oneOf", "anyOf"):
            if key in s and s[key]:
                options = [o for o in s[key] if self.resolve(o).get("type") != "null"] if all(isinstance(self.resolve(o), dict) for o in s[key]) else s[key]
                choice = (options or s[key])[0]
                rest = {k: v for k, v in s.items() if k not in (key, "discriminator")}
                c = self.resolve(choice)
                if isinstance(c, dict) and rest.get("properties") and c.get("properties"):
                    c = {**c, "properties": {**rest["properties"], **c["properties"]}}
                v = self.value(c, depth + 1, optional)
                return v
        t = s.get("type")
        if isinstance(t, list):
            non_null = [x for x in t if x != "null"]
            t = non_null[0] if non_null else "null"
        if t is None:
            if "properties" in s:
                t = "object"
            elif "items" in s:
                t = "array"
            else:
                return "x"
        if t == "null":
            return None
        if t == "boolean":
            return True
        if t in ("integer", "number"):
            lo = s.get("minimum", s.get("exclusiveMinimum"))
            hi = s.get("maximum", s.get("exclusiveMaximum"))
            v = 1
            if isinstance(lo, (int, float)) and not isinstance(lo, bool):
                v = int(lo) + 1 if "exclusiveMinimum" in s and "minimum" not in s else lo
            if isinstance(hi, (int, float)) and not isinstance(hi, bool) and v > hi:
                v = hi
            mult = s.get("multipleOf")
            if isinstance(mult, (int, float)) and mult:
                v = mult * max(1, round(v / mult))
            return int(v) if t == "integer" else v
        if t == "string":
            if s.get("contentEncoding") == "base64":
                return base64.b64encode(b"hello").decode()
            if isinstance(s.get("pattern"), str):
                v = from_pattern(s["pattern"], s.get("minLength", 0), s.get("maxLength"))
                if v is not None:
                    return v
            v = FORMATS.get(s.get("format", ""), "abc")
            lo = s.get("minLength", 0)
            if len(v) < lo:
                v = v + "a" * (lo - len(v))
            hi = s.get("maxLength")
            if isinstance(hi, int) and len(v) > hi:
                v = v[:hi]
            return v
        if t == "array":
            n = max(1, s.get("minItems", 1))
            if depth > 6:
                n = s.get("minItems", 0)
            item = s.get("items", {})
            if s.get("prefixItems"):
                return [self.value(i, depth + 1, optional) for i in s["prefixItems"]]
            vals = [self.value(item, depth + 1, optional) for _ in range(n)]
            if s.get("uniqueItems") and n > 1:
                vals = vals[:1]
            return vals
        if t == "object":
            out = {}
            props = s.get("properties", {})
            required = set(s.get("required", []))
            for k, ps in props.items():
                rp = self.resolve(ps)
                if isinstance(rp, dict) and rp.get("readOnly"):
                    continue
                if k in required or (optional and depth < 3):
                    v = self.value(ps, depth + 1, optional)
                    out[k] = v
            ap = s.get("additionalProperties")
            if not props and isinstance(ap, dict) and ap:
                out["key1"] = self.value(ap, depth + 1, optional)
            mp = s.get("minProperties", 0)
            if len(out) < mp and ap is not False:
                for i in range(mp - len(out)):
                    out[f"k{i}"] = "x"
            return out
        return "x"

    def args(self, input_schema: dict, optional: bool) -> dict:
        out = {}
        required = set(input_schema.get("required", []))
        for k, ps in input_schema.get("properties", {}).items():
            if k in required or optional:
                out[k] = self.value(ps, 1, optional)
        # dependentRequired: an optional field present pulls in its partners.
        for k, deps in input_schema.get("dependentRequired", {}).items():
            if k in out:
                for d in deps:
                    if d not in out and d in input_schema.get("properties", {}):
                        out[d] = self.value(input_schema["properties"][d], 1, optional)
        return out


# ------------------------------------------------------------------------- validation


def load_spec(path: pathlib.Path) -> dict:
    text = path.read_text()
    return json.loads(text) if text.lstrip().startswith("{") else yaml.safe_load(text)


def openapi_for(spec: dict, path: pathlib.Path, base: str, paths: dict | None = None) -> OpenAPI:
    """The spec served at `base`: every `servers` (root, path item, operation) replaced by it.
    With `paths`, a document of those paths only (the rest of the spec shared, not copied)."""
    doc = {k: v for k, v in spec.items() if k != "paths"}
    doc["servers"] = [{"url": base}]
    doc["paths"] = copy.deepcopy(spec.get("paths", {}) if paths is None else paths)
    for item in doc["paths"].values():
        if isinstance(item, dict):
            item.pop("servers", None)
            for op in item.values():
                if isinstance(op, dict):
                    op.pop("servers", None)
    # The spec's own validity is not what is checked here (some fixtures are lax on purpose).
    return OpenAPI.from_dict(doc, base_uri=path.resolve().as_uri(), config=Config(spec_validator_cls=None))


def odd_key_variants(spec: dict, path: pathlib.Path, base: str, odd_keys: list[str], cache: dict):
    """For path keys with `#…` or `?…` (AWS's `/#X-Amz-Target=Svc.Op`, `/{Bucket}?acl`), which
    openapi-core cannot match: one single-operation document per such key, its path cut at `#`/`?`
    (the proxy sends the fragment nowhere and the query as written). Built on first use."""
    for key in odd_keys:
        if key not in cache:
            cut = re.split(r"[#?]", key, maxsplit=1)[0] or "/"
            cache[key] = openapi_for(spec, path, base, {cut: spec["paths"][key]})
        yield key, cache[key]


def odd_key_score(key: str, rec: dict) -> int:
    """How well a `#…`/`?…` key's names and values match the request's headers and query: the
    candidate to report when no variant accepts the request."""
    tail = re.split(r"[#?]", key, maxsplit=1)[1] if re.search(r"[#?]", key) else ""
    query = urllib.parse.parse_qsl(urllib.parse.urlsplit(rec["target"]).query, keep_blank_values=True)
    seen = {k.lower(): v for k, v in rec["header_list"]} | {k.lower(): v for k, v in query}
    score = 0
    for part in re.split(r"[&;]", tail):
        name, _, value = part.partition("=")
        if name.lower() in seen and (not value or seen[name.lower()] == value):
            score += 1
    return score


def odd_key_verdict(spec, path, base, host, odd_keys, variants, rec) -> tuple[str, str | None]:
    """(reason, validator limitation) of a request no ordinary path matched, validated against the
    `#`/`?` keys' own documents, best-matching key first; ("", None) when one accepts it."""
    first = None
    for key, doc in odd_key_variants(spec, path, base, sorted(odd_keys, key=lambda k: -odd_key_score(k, rec)), variants):
        try:
            doc.validate_request(mock_request(rec, host))
            return "", None
        except OpenAPIError as e:
            if first is None and type(e).__name__ not in ("PathNotFound", "OperationNotFound"):
                first = f"(as `{key}`) {reason_of(e)}"
        except Exception as e:  # the validator itself failed on this document
            return f"(as `{key}`) {reason_of(e)}", "openapi-core failed"
    if first is None:
        return "no path matched, not even the '#'/'?' keys'", "openapi-core cannot match path keys with '#' or '?' in them"
    return first, validator_limitation(first) or free_form_query_gap(spec, first) or form_cast_gap(first, rec) or readonly_required_gap(spec, first)


def readonly_required_gap(spec: dict, why: str) -> str | None:
    """A body missing only properties that are `required` but readOnly (directly or through their
    `$ref`): the proxy rightly leaves them out, openapi-core still requires them (the KNOWN
    entries' `_READONLY_REQUIRED`, recognised without listing each tool)."""
    if "InvalidRequestBody" not in why:
        return None
    missing = set(re.findall(r"'([^']+)' is a required property", why))
    if not missing or re.search(r"is not of type|is not one of|does not match|is not valid under", why):
        return None
    schemas = (spec.get("components") or {}).get("schemas") or {}

    def read_only(prop) -> bool:
        for _ in range(5):
            if not isinstance(prop, dict):
                return False
            if prop.get("readOnly") is True or any(read_only(m) for m in prop.get("allOf") or []):
                return True
            ref = prop.get("$ref")
            if not isinstance(ref, str):
                return False
            prop = schemas.get(ref.rsplit("/", 1)[-1])
        return False

    ro = {
        name
        for sch in schemas.values()
        if isinstance(sch, dict)
        for name, prop in (sch.get("properties") or {}).items()
        if name in missing and read_only(prop)
    }
    return _READONLY_REQUIRED if missing <= ro else None


def content_type(rec: dict) -> str | None:
    """The recorded request's Content-Type header, if it has one."""
    return next((v for k, v in rec["header_list"] if k.lower() == "content-type"), None)


def form_cast_gap(why: str, rec: dict) -> str | None:
    """A multipart or urlencoded body whose text fields (`1`, `true`) openapi-core validates as
    strings or bytes against an integer, number or boolean schema: every form field is text on the
    wire, and the spec's schema says how to read it."""
    ctype = content_type(rec) or ""
    if not re.match(r"(multipart/form-data|application/x-www-form-urlencoded)", ctype) or "InvalidRequestBody" not in why:
        return None
    if re.search(r"b?'(-?[0-9.]+(e-?[0-9]+)?|true|false)' is not of type '(integer|number|boolean)'", why) or re.search(
        r"b'[^']*' is not valid under any of the given schemas", why
    ):
        return "openapi-core does not read form and multipart text fields as the numbers or booleans their schema says"
    return None


def free_form_query_gap(spec: dict, why: str) -> str | None:
    """A required query parameter that is an exploded object (AWS's `Attributes`, `HealthCheck`):
    form style sends its entries as `key=value` pairs of their own (OAS 3 style table), which
    openapi-core cannot tie back to the parameter and reports missing."""
    m = re.search(r"MissingRequiredParameter: Missing required query parameter: (\S+)", why)
    if not m:
        return None
    comps = (spec.get("components") or {}).get("parameters") or {}
    for item in (spec.get("paths") or {}).values():
        for op in (item or {}).values() if isinstance(item, dict) else ():
            for prm in (op.get("parameters") or []) if isinstance(op, dict) else ():
                if isinstance(prm, dict) and "$ref" in prm:
                    prm = comps.get(prm["$ref"].rsplit("/", 1)[-1], {})
                sch = (prm or {}).get("schema") or {}
                if isinstance(sch, dict) and isinstance(sch.get("$ref"), str):
                    sch = ((spec.get("components") or {}).get("schemas") or {}).get(sch["$ref"].rsplit("/", 1)[-1], {})
                if (
                    prm.get("name") == m.group(1)
                    and prm.get("in") == "query"
                    and prm.get("explode", prm.get("style", "form") == "form")
                    and (sch.get("type") == "object" or "additionalProperties" in sch or "properties" in sch)
                ):
                    return "openapi-core cannot read an exploded query object (its entries are sent as key=value)"
    return None


def mock_request(rec: dict, host: str) -> MockRequest:
    parts = urllib.parse.urlsplit(rec["target"])
    query = urllib.parse.parse_qsl(parts.query, keep_blank_values=True)
    headers = {}
    for k, v in rec["header_list"]:
        headers[k] = v if k not in headers else headers[k] + ", " + v
    cookies = {}
    for k, v in rec["header_list"]:
        if k.lower() == "cookie":
            for pair in v.split(";"):
                if "=" in pair:
                    ck, cv = pair.strip().split("=", 1)
                    cookies[ck] = cv
    ctype = content_type(rec)
    return MockRequest(
        host,
        rec["method"].lower(),
        parts.path,
        args=query,
        headers=headers,
        cookies=cookies,
        data=rec["body"] or None,
        content_type=ctype or "",
    )


def reason_of(err: Exception) -> str:
    parts = [f"{type(err).__name__}: {err}"]
    cause = err.__cause__ or err.__context__
    depth = 0
    while cause is not None and depth < 4:
        try:
            text = str(cause)
        except Exception as e:  # openapi-core's own __str__ can fail (MediaTypeDeserializeError on str values)
            text = f"<str() failed: {e!r}> {getattr(cause, 'args', '')!r}"
        parts.append(f"{type(cause).__name__}: {text}")
        for sub in getattr(cause, "schema_errors", []) or []:
            parts.append(f"  - {getattr(sub, 'message', sub)} at {list(getattr(sub, 'absolute_path', []))}")
        cause = cause.__cause__ or cause.__context__
        depth += 1
    return " | ".join(parts)[:900]


def validator_limitation(why: str) -> str | None:
    """openapi-core 0.23 failures that are its own gaps, not a verdict on the request."""
    if "KeyError: '." in why or "KeyError: ';" in why:
        return "openapi-core does not read label/matrix path parameters"
    if "TypeError: a bytes-like object is required" in why or "ValueError: not available" in why:
        return "openapi-core cannot deserialize styled multipart parts"
    if "could not be resolved" in why and "reference" in why:
        return "openapi-core cannot resolve discriminator mappings by schema name"
    if "Value {" in why and ": b'" in why and "is not of type 'string'" in why:
        return "openapi-core reads multipart parts as bytes, then wants strings"
    if "Value b'" in why and "is not of type" in why:
        return "openapi-core does not parse this (+json) media type"
    if "CastError: Failed to cast value to" in why and "[" in why:
        return "openapi-core does not read nested deepObject (bracket) keys"
    if "DeserializeError: ('form', 'object')" in why and "dictionary update sequence" in why:
        return "openapi-core cannot read non-exploded form objects (k1,v1,k2,v2)"
    if re.search(r"DeserializeError: \('form', '[^']+'\)", why) and "dictionary update sequence element #0 has length 1" in why:
        return "openapi-core cannot read a required empty form object (sent as `name=`)"
    if "InvalidRequestBody" in why and ": b'" in why and re.search(r"'[0-9.]+' is not of type '(integer|number)'", why):
        return "openapi-core does not cast multipart text parts to numbers"
    if "Tried to write read-only property" in why and re.search(r"Invalid (path|query|header|cookie) parameter", why):
        return "openapi-core applies readOnly to parameters"
    m = re.search(r"Invalid path parameter: \S+ \| InvalidSchemaValue: Value (\S+) not valid", why)
    if m and re.search(r"%[0-9A-Fa-f]{2}", m.group(1)) and "%25" not in m.group(1):
        return "openapi-core does not percent-decode path parameters (`:` is sent as %3A, RFC 6570)"
    if re.search(r"(RequestBodyValidationError|ParameterValidationError: Query parameter error)", why) and re.search(
        r"CastError: Failed to cast value to (object|array) type", why
    ):
        return "openapi-core does not read nested deepObject (bracket) keys (a[b][c]=v) in form bodies or queries"
    m = re.search(r"Invalid (?:query|header|cookie|path) parameter: .*\"'([^']*)' is not one of \[([^\]]*)\]", why)
    if m and m.group(1) in [e.strip().lower() for e in m.group(2).split(",") if not e.strip().startswith("'")]:
        return "openapi-core does not cast parameters whose schema has an enum of numbers/booleans but no type"
    return None


def credentials_env(spec: dict) -> dict:
    env = {}
    schemes = (spec.get("components") or {}).get("securitySchemes") or {}
    for name, s in schemes.items():
        snake = "".join(c if c.isalnum() else "_" for c in name)
        # upper snake case of the scheme name, like the proxy derives it
        out = []
        for i, c in enumerate(name):
            prev = name[i - 1] if i > 0 else ""
            nxt = name[i + 1] if i + 1 < len(name) else ""
            # word starts as heck's snake_case splits them: `apiKey` -> api_key, and the last
            # capital of an acronym before a lowercase letter (`APIToken` -> api_token)
            if c.isupper() and i > 0 and (
                prev.islower() or prev.isdigit() or (prev.isupper() and nxt.islower())
            ):
                out.append("_")
            out.append(c if c.isalnum() else "_")
        snake = "".join(out).upper().strip("_")
        while "__" in snake:
            snake = snake.replace("__", "_")
        var = f"OPENAPI_MCP_{snake}"
        kind = (s or {}).get("type")
        if kind == "http" and str(s.get("scheme", "")).lower() == "basic":
            env[var] = "user:pass"
        else:
            env[var] = "dummy-credential"
    return env


async def run_spec(bin_path: str, path: pathlib.Path, upstream: Upstream, stats: dict, failures: list) -> None:
    spec = load_spec(path)
    if not str(spec.get("openapi", "")).startswith("3."):
        print(f"  skip {path.name}: not OpenAPI 3.x (openapi-core validates 3.x only)")
        return
    host = f"http://127.0.0.1:{upstream.port}"
    base = host + BASE_PATH
    api = openapi_for(spec, path, base)
    odd_keys = [k for k in spec.get("paths", {}) if "#" in k or "?" in k]
    variants: dict = {}
    env = dict(os.environ, RUST_LOG="error", **credentials_env(spec))
    params = StdioServerParameters(command=bin_path, args=["proxy", str(path), "--base-url", base, "--timeout", "10", "--header", "Authorization: Bearer static-header-token"], env=env)
    counts = {"valid": 0, "invalid": 0, "refused": 0, "unsent": 0, "known": 0, "unvalidatable": 0, "call_errors": 0}
    refusals: list[str] = []
    call_errors: list[str] = []
    crashes: list[str] = []
    async with Client(params) as client:
        # Every page: a list over 8 MiB comes in several (Kubernetes: 3).
        all_tools = []
        cursor = None
        while True:
            page = await client.list_tools(cursor=cursor)
            all_tools += page.tools
            cursor = page.next_cursor
            if not cursor:
                break
        tools = all_tools[OFFSET : OFFSET + MAX_TOOLS]
        for tool in tools:
            schema = tool.input_schema or {}
            gen = Gen(schema)
            verdict = None
            for optional in (True, False):
                args = gen.args(schema, optional)
                upstream.take()
                call_error = None
                result = None
                try:
                    result = await asyncio.wait_for(client.call_tool(tool.name, args), CALL_TIMEOUT)
                except Exception as e:  # protocol error, timeout, or the client rejecting the result
                    call_error = repr(e)
                sent = upstream.take()
                if call_error is not None:
                    counts["call_errors"] += 1
                    call_errors.append(f"{tool.name}: {call_error}")
                if not sent:
                    if result is not None and result.is_error:
                        text = "".join(getattr(c, "text", "") for c in result.content)
                        verdict = ("refused", text[:300], args, None)
                        continue  # retry with required arguments only
                    verdict = ("unsent", call_error or "no request and no error", args, None)
                    break
                rec = sent[-1]
                why = ""
                try:
                    api.validate_request(mock_request(rec, host))
                    verdict = ("valid", "", args, rec)
                except OpenAPIError as e:  # the request breaks the spec, or openapi-core gave up
                    why = reason_of(e)
                    limit = validator_limitation(why) or free_form_query_gap(spec, why) or form_cast_gap(why, rec) or readonly_required_gap(spec, why)
                    if limit is None and re.search(r"(Path|Operation)NotFound", why) and odd_keys:
                        why, limit = None, None  # validated below, outside this handler
                    if why is not None:
                        verdict = ("unvalidatable", f"{limit}: {why}", args, rec) if limit else ("invalid", why, args, rec)
                except Exception as e:  # the validator itself failed on this spec
                    verdict = ("unvalidatable", reason_of(e), args, rec)
                if why is None:
                    why, limit = odd_key_verdict(spec, path, base, host, odd_keys, variants, rec)
                    verdict = (
                        ("valid", "", args, rec)
                        if not why
                        else ("unvalidatable", f"{limit}: {why}", args, rec)
                        if limit
                        else ("invalid", why, args, rec)
                    )
                if verdict[0] == "unvalidatable" and optional:
                    continue  # an optional argument may be what the validator cannot read
                break
            kind, why, args, rec = verdict
            if kind in ("invalid", "unsent") and (path.name, tool.name) in KNOWN:
                kind = "known"
            counts[kind] += 1
            if kind in ("invalid", "unsent"):
                failures.append((path.name, tool.name, kind, why, args, rec))
            elif kind == "refused":
                refusals.append(f"{tool.name}: {why}")
            elif kind == "unvalidatable":
                crashes.append(f"{tool.name}: {why}")
    for k, v in counts.items():
        stats[k] = stats.get(k, 0) + v
    print(f"  {path.name}: {len(tools)} tools: " + ", ".join(f"{k} {v}" for k, v in counts.items()))
    for label, lines in (
        ("refused (generator gap)", refusals),
        ("unvalidatable (openapi-core failed)", crashes),
        ("client error", call_errors),
    ):
        for r in lines[:3]:
            print(f"    {label}: {r[:300]}")


def show(rec: dict | None) -> str:
    if rec is None:
        return "(nothing sent)"
    hdrs = {k: v for k, v in rec["header_list"] if k.lower() not in ("host", "user-agent", "accept-encoding")}
    body = rec["body"][:300]
    return f"{rec['method']} {rec['target']} headers={hdrs} body={body!r}"


async def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--bin", required=True)
    p.add_argument("specs", nargs="+")
    a = p.parse_args()
    upstream = Upstream()
    stats: dict = {}
    failures: list = []
    started = time.time()
    for s in a.specs:
        path = pathlib.Path(s)
        if not path.exists():
            print(f"  skip {s}: not found")
            continue
        try:
            await asyncio.wait_for(run_spec(a.bin, path, upstream, stats, failures), 600)
        except Exception as e:
            print(f"  {path.name}: FAILED to run: {e!r}")
            failures.append((path.name, "-", "error", repr(e), {}, None))
    print(f"request validation: {stats} in {time.time() - started:.0f}s")
    for spec, tool, kind, why, args, rec in failures:
        print(f"\n{kind.upper()}: {spec} {tool}\n  args: {json.dumps(args)[:400]}\n  sent: {show(rec)}\n  why: {why}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
