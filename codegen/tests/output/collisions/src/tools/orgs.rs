//! Operations without tags under `/orgs`: per operation, an argument struct and a handler.
#![allow(
    unknown_lints,
    clippy::doc_lazy_continuation,
    clippy::doc_overindented_list_items,
    clippy::doc_nested_refdefs,
    clippy::tabs_in_doc_comments,
    clippy::needless_doctest_main,
    clippy::test_attr_in_doctest
)]
use ::openapi_mcp_runtime::generated::{CallToolResult, Forwarder, Route};
use ::serde_json::{Map, Value};
/// operationId containing a slash
///
/// Arguments of the tool `name_orgs_list` (`GET /orgs`).
#[derive(Debug, Clone, ::serde::Deserialize, ::serde::Serialize)]
pub struct NameOrgsListArgs {}
/// The tool `name_orgs_list` (`GET /orgs`): reads the arguments as [`NameOrgsListArgs`] and puts each one where the API
/// expects it. The route (from the spec) says how each is serialized; the runtime builds and
/// sends the request exactly as `openapi-mcp proxy` does.
pub async fn name_orgs_list(
    fwd: &Forwarder,
    route: &Route,
    args: Map<String, Value>,
) -> CallToolResult {
    let _args: NameOrgsListArgs = match super::parse("name_orgs_list", &args) {
        Ok(args) => args,
        Err(invalid) => return *invalid,
    };
    fwd.request(route).send().await
}
/// Operation without an operationId
///
/// Arguments of the tool `name_post_orgs` (`POST /orgs`).
#[derive(Debug, Clone, ::serde::Deserialize, ::serde::Serialize)]
pub struct NamePostOrgsArgs {
    /// Request body property `login`.
    pub login: String,
}
/// The tool `name_post_orgs` (`POST /orgs`): reads the arguments as [`NamePostOrgsArgs`] and puts each one where the API
/// expects it. The route (from the spec) says how each is serialized; the runtime builds and
/// sends the request exactly as `openapi-mcp proxy` does.
pub async fn name_post_orgs(
    fwd: &Forwarder,
    route: &Route,
    args: Map<String, Value>,
) -> CallToolResult {
    let args: NamePostOrgsArgs = match super::parse("name_post_orgs", &args) {
        Ok(args) => args,
        Err(invalid) => return *invalid,
    };
    fwd.request(route).body_field("login", &args.login).send().await
}
/// operationId longer than 100 characters
///
/// Arguments of the tool `name_list_all_the_reports_for_the_given_organization_and_vhw64z` (`GET /orgs/{orgId}/reports`).
#[derive(Debug, Clone, ::serde::Deserialize, ::serde::Serialize)]
pub struct NameListAllTheReportsForTheGivenOrganizationAndVhw64zArgs {
    /// Path parameter `orgId`.
    #[serde(rename = "orgId")]
    pub org_id: String,
}
/// The tool `name_list_all_the_reports_for_the_given_organization_and_vhw64z` (`GET /orgs/{orgId}/reports`): reads the arguments as [`NameListAllTheReportsForTheGivenOrganizationAndVhw64zArgs`] and puts each one where the API
/// expects it. The route (from the spec) says how each is serialized; the runtime builds and
/// sends the request exactly as `openapi-mcp proxy` does.
pub async fn name_list_all_the_reports_for_the_given_organization_and_vhw64z(
    fwd: &Forwarder,
    route: &Route,
    args: Map<String, Value>,
) -> CallToolResult {
    let args: NameListAllTheReportsForTheGivenOrganizationAndVhw64zArgs = match super::parse(
        "name_list_all_the_reports_for_the_given_organization_and_vhw64z",
        &args,
    ) {
        Ok(args) => args,
        Err(invalid) => return *invalid,
    };
    fwd.request(route).path("orgId", &args.org_id).send().await
}
/// Shares its first 64 characters with the q2 export operation
///
/// Arguments of the tool `name_export_organization_project_reports_as_spreadsheet_w_w1f29e` (`POST /orgs/{orgId}/exports/q1`).
#[derive(Debug, Clone, ::serde::Deserialize, ::serde::Serialize)]
pub struct NameExportOrganizationProjectReportsAsSpreadsheetWW1f29eArgs {
    /// Path parameter `orgId`.
    #[serde(rename = "orgId")]
    pub org_id: String,
}
/// The tool `name_export_organization_project_reports_as_spreadsheet_w_w1f29e` (`POST /orgs/{orgId}/exports/q1`): reads the arguments as [`NameExportOrganizationProjectReportsAsSpreadsheetWW1f29eArgs`] and puts each one where the API
/// expects it. The route (from the spec) says how each is serialized; the runtime builds and
/// sends the request exactly as `openapi-mcp proxy` does.
pub async fn name_export_organization_project_reports_as_spreadsheet_w_w1f29e(
    fwd: &Forwarder,
    route: &Route,
    args: Map<String, Value>,
) -> CallToolResult {
    let args: NameExportOrganizationProjectReportsAsSpreadsheetWW1f29eArgs = match super::parse(
        "name_export_organization_project_reports_as_spreadsheet_w_w1f29e",
        &args,
    ) {
        Ok(args) => args,
        Err(invalid) => return *invalid,
    };
    fwd.request(route).path("orgId", &args.org_id).send().await
}
/// Shares its first 64 characters with the q1 export operation
///
/// Arguments of the tool `name_export_organization_project_reports_as_spreadsheet_w_sn7ga5` (`POST /orgs/{orgId}/exports/q2`).
#[derive(Debug, Clone, ::serde::Deserialize, ::serde::Serialize)]
pub struct NameExportOrganizationProjectReportsAsSpreadsheetWSn7ga5Args {
    /// Path parameter `orgId`.
    #[serde(rename = "orgId")]
    pub org_id: String,
}
/// The tool `name_export_organization_project_reports_as_spreadsheet_w_sn7ga5` (`POST /orgs/{orgId}/exports/q2`): reads the arguments as [`NameExportOrganizationProjectReportsAsSpreadsheetWSn7ga5Args`] and puts each one where the API
/// expects it. The route (from the spec) says how each is serialized; the runtime builds and
/// sends the request exactly as `openapi-mcp proxy` does.
pub async fn name_export_organization_project_reports_as_spreadsheet_w_sn7ga5(
    fwd: &Forwarder,
    route: &Route,
    args: Map<String, Value>,
) -> CallToolResult {
    let args: NameExportOrganizationProjectReportsAsSpreadsheetWSn7ga5Args = match super::parse(
        "name_export_organization_project_reports_as_spreadsheet_w_sn7ga5",
        &args,
    ) {
        Ok(args) => args,
        Err(invalid) => return *invalid,
    };
    fwd.request(route).path("orgId", &args.org_id).send().await
}
