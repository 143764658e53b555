//! Operations tagged `pets`: per operation, an argument struct and a handler.
#![allow(
    unknown_lints,
    clippy::doc_lazy_continuation,
    clippy::doc_overindented_list_items,
    clippy::doc_nested_refdefs,
    clippy::tabs_in_doc_comments,
    clippy::needless_doctest_main,
    clippy::test_attr_in_doctest
)]
use ::openapi_mcp_runtime::forward::Forwarder;
use ::openapi_mcp_runtime::model::Route;
use ::openapi_mcp_runtime::rmcp::model::CallToolResult;
use ::serde_json::{Map, Value};
/// List all pets
///
/// Arguments of the tool `petstore_list_pets` (`GET /pets`).
#[derive(Debug, Clone, ::serde::Deserialize)]
pub struct PetstoreListPetsArgs {
    /// How many items to return at one time (max 100)
    ///
    /// Query parameter `limit`.
    pub limit: Option<i64>,
    /// Only return pets carrying any of these tags
    ///
    /// Query parameter `tags`.
    pub tags: Option<Vec<String>>,
}
/// The tool `petstore_list_pets` (`GET /pets`): reads the arguments as [`PetstoreListPetsArgs`], then forwards them with the runtime's
/// `Forwarder`, which builds the request exactly as `openapi-mcp proxy` does.
pub async fn petstore_list_pets(
    fwd: &Forwarder,
    route: &Route,
    args: Map<String, Value>,
) -> CallToolResult {
    let _typed: PetstoreListPetsArgs = match super::parse("petstore_list_pets", &args) {
        Ok(typed) => typed,
        Err(invalid) => return *invalid,
    };
    fwd.call(route, &args).await
}
/// Create a pet
///
/// Arguments of the tool `petstore_create_pet` (`POST /pets`).
#[derive(Debug, Clone, ::serde::Deserialize)]
pub struct PetstoreCreatePetArgs {
    /// Request body property `name`.
    pub name: String,
    /// Request body property `tag`.
    pub tag: Option<String>,
    /// Request body property `status`.
    pub status: Option<Status>,
}
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, ::serde::Deserialize)]
#[allow(clippy::enum_variant_names)]
pub enum Status {
    #[serde(rename = "available")]
    Available,
    #[serde(rename = "pending")]
    Pending,
    #[serde(rename = "sold")]
    Sold,
}
/// The tool `petstore_create_pet` (`POST /pets`): reads the arguments as [`PetstoreCreatePetArgs`], then forwards them with the runtime's
/// `Forwarder`, which builds the request exactly as `openapi-mcp proxy` does.
pub async fn petstore_create_pet(
    fwd: &Forwarder,
    route: &Route,
    args: Map<String, Value>,
) -> CallToolResult {
    let _typed: PetstoreCreatePetArgs = match super::parse(
        "petstore_create_pet",
        &args,
    ) {
        Ok(typed) => typed,
        Err(invalid) => return *invalid,
    };
    fwd.call(route, &args).await
}
/// Deprecated. Search pets by name (legacy)
///
/// Superseded by listPets with the tags filter.
///
/// Arguments of the tool `petstore_search_pets_legacy` (`GET /pets/search`).
#[derive(Debug, Clone, ::serde::Deserialize)]
pub struct PetstoreSearchPetsLegacyArgs {
    /// Query parameter `q`.
    pub q: String,
}
/// The tool `petstore_search_pets_legacy` (`GET /pets/search`): reads the arguments as [`PetstoreSearchPetsLegacyArgs`], then forwards them with the runtime's
/// `Forwarder`, which builds the request exactly as `openapi-mcp proxy` does.
pub async fn petstore_search_pets_legacy(
    fwd: &Forwarder,
    route: &Route,
    args: Map<String, Value>,
) -> CallToolResult {
    let _typed: PetstoreSearchPetsLegacyArgs = match super::parse(
        "petstore_search_pets_legacy",
        &args,
    ) {
        Ok(typed) => typed,
        Err(invalid) => return *invalid,
    };
    fwd.call(route, &args).await
}
/// Info for a specific pet
///
/// Arguments of the tool `petstore_show_pet_by_id` (`GET /pets/{petId}`).
#[derive(Debug, Clone, ::serde::Deserialize)]
pub struct PetstoreShowPetByIdArgs {
    /// The id of the pet
    ///
    /// Path parameter `petId`.
    #[serde(rename = "petId")]
    pub pet_id: i64,
}
/// The tool `petstore_show_pet_by_id` (`GET /pets/{petId}`): reads the arguments as [`PetstoreShowPetByIdArgs`], then forwards them with the runtime's
/// `Forwarder`, which builds the request exactly as `openapi-mcp proxy` does.
pub async fn petstore_show_pet_by_id(
    fwd: &Forwarder,
    route: &Route,
    args: Map<String, Value>,
) -> CallToolResult {
    let _typed: PetstoreShowPetByIdArgs = match super::parse(
        "petstore_show_pet_by_id",
        &args,
    ) {
        Ok(typed) => typed,
        Err(invalid) => return *invalid,
    };
    fwd.call(route, &args).await
}
/// Replace a pet
///
/// Arguments of the tool `petstore_update_pet` (`PUT /pets/{petId}`).
#[derive(Debug, Clone, ::serde::Deserialize)]
pub struct PetstoreUpdatePetArgs {
    /// The id of the pet
    ///
    /// Path parameter `petId`.
    #[serde(rename = "petId")]
    pub pet_id: i64,
    /// Request body property `name`.
    pub name: String,
    /// Request body property `tag`.
    pub tag: Option<String>,
    /// Request body property `status`.
    pub status: Option<Status>,
}
/// The tool `petstore_update_pet` (`PUT /pets/{petId}`): reads the arguments as [`PetstoreUpdatePetArgs`], then forwards them with the runtime's
/// `Forwarder`, which builds the request exactly as `openapi-mcp proxy` does.
pub async fn petstore_update_pet(
    fwd: &Forwarder,
    route: &Route,
    args: Map<String, Value>,
) -> CallToolResult {
    let _typed: PetstoreUpdatePetArgs = match super::parse(
        "petstore_update_pet",
        &args,
    ) {
        Ok(typed) => typed,
        Err(invalid) => return *invalid,
    };
    fwd.call(route, &args).await
}
/// Delete a pet
///
/// Arguments of the tool `petstore_delete_pet` (`DELETE /pets/{petId}`).
#[derive(Debug, Clone, ::serde::Deserialize)]
pub struct PetstoreDeletePetArgs {
    /// The id of the pet
    ///
    /// Path parameter `petId`.
    #[serde(rename = "petId")]
    pub pet_id: i64,
}
/// The tool `petstore_delete_pet` (`DELETE /pets/{petId}`): reads the arguments as [`PetstoreDeletePetArgs`], then forwards them with the runtime's
/// `Forwarder`, which builds the request exactly as `openapi-mcp proxy` does.
pub async fn petstore_delete_pet(
    fwd: &Forwarder,
    route: &Route,
    args: Map<String, Value>,
) -> CallToolResult {
    let _typed: PetstoreDeletePetArgs = match super::parse(
        "petstore_delete_pet",
        &args,
    ) {
        Ok(typed) => typed,
        Err(invalid) => return *invalid,
    };
    fwd.call(route, &args).await
}
