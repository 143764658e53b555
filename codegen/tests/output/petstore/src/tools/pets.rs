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
use ::openapi_mcp_runtime::generated::{CallToolResult, Forwarder, Route};
use ::serde_json::{Map, Value};
/// List all pets
///
/// Arguments of the tool `petstore_list_pets` (`GET /pets`).
#[derive(Debug, Clone, ::serde::Deserialize, ::serde::Serialize)]
pub struct PetstoreListPetsArgs {
    /// How many items to return at one time (max 100)
    ///
    /// Query parameter `limit`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<i64>,
    /// Only return pets carrying any of these tags
    ///
    /// Query parameter `tags`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tags: Option<Vec<String>>,
}
/// The tool `petstore_list_pets` (`GET /pets`): reads the arguments as [`PetstoreListPetsArgs`] and puts each one where the API
/// expects it. The route (from the spec) says how each is serialized; the runtime builds and
/// sends the request exactly as `openapi-mcp proxy` does.
pub async fn petstore_list_pets(
    fwd: &Forwarder,
    route: &Route,
    args: Map<String, Value>,
) -> CallToolResult {
    let args: PetstoreListPetsArgs = match super::parse("petstore_list_pets", &args) {
        Ok(args) => args,
        Err(invalid) => return *invalid,
    };
    fwd.request(route)
        .query_opt("limit", args.limit.as_ref())
        .query_opt("tags", args.tags.as_ref())
        .send()
        .await
}
/// Create a pet
///
/// Arguments of the tool `petstore_create_pet` (`POST /pets`).
#[derive(Debug, Clone, ::serde::Deserialize, ::serde::Serialize)]
pub struct PetstoreCreatePetArgs {
    /// Request body property `name`.
    pub name: String,
    /// Request body property `tag`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tag: Option<String>,
    /// Request body property `status`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<Status>,
}
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    ::serde::Deserialize,
    ::serde::Serialize
)]
#[allow(clippy::enum_variant_names)]
pub enum Status {
    #[serde(rename = "available")]
    Available,
    #[serde(rename = "pending")]
    Pending,
    #[serde(rename = "sold")]
    Sold,
}
/// The tool `petstore_create_pet` (`POST /pets`): reads the arguments as [`PetstoreCreatePetArgs`] and puts each one where the API
/// expects it. The route (from the spec) says how each is serialized; the runtime builds and
/// sends the request exactly as `openapi-mcp proxy` does.
pub async fn petstore_create_pet(
    fwd: &Forwarder,
    route: &Route,
    args: Map<String, Value>,
) -> CallToolResult {
    let args: PetstoreCreatePetArgs = match super::parse("petstore_create_pet", &args) {
        Ok(args) => args,
        Err(invalid) => return *invalid,
    };
    fwd.request(route)
        .body_field("name", &args.name)
        .body_field_opt("tag", args.tag.as_ref())
        .body_field_opt("status", args.status.as_ref())
        .send()
        .await
}
/// Deprecated. Search pets by name (legacy)
///
/// Superseded by listPets with the tags filter.
///
/// Arguments of the tool `petstore_search_pets_legacy` (`GET /pets/search`).
#[derive(Debug, Clone, ::serde::Deserialize, ::serde::Serialize)]
pub struct PetstoreSearchPetsLegacyArgs {
    /// Query parameter `q`.
    pub q: String,
}
/// The tool `petstore_search_pets_legacy` (`GET /pets/search`): reads the arguments as [`PetstoreSearchPetsLegacyArgs`] and puts each one where the API
/// expects it. The route (from the spec) says how each is serialized; the runtime builds and
/// sends the request exactly as `openapi-mcp proxy` does.
pub async fn petstore_search_pets_legacy(
    fwd: &Forwarder,
    route: &Route,
    args: Map<String, Value>,
) -> CallToolResult {
    let args: PetstoreSearchPetsLegacyArgs = match super::parse(
        "petstore_search_pets_legacy",
        &args,
    ) {
        Ok(args) => args,
        Err(invalid) => return *invalid,
    };
    fwd.request(route).query("q", &args.q).send().await
}
/// Info for a specific pet
///
/// Arguments of the tool `petstore_show_pet_by_id` (`GET /pets/{petId}`).
#[derive(Debug, Clone, ::serde::Deserialize, ::serde::Serialize)]
pub struct PetstoreShowPetByIdArgs {
    /// The id of the pet
    ///
    /// Path parameter `petId`.
    #[serde(rename = "petId")]
    pub pet_id: i64,
}
/// The tool `petstore_show_pet_by_id` (`GET /pets/{petId}`): reads the arguments as [`PetstoreShowPetByIdArgs`] and puts each one where the API
/// expects it. The route (from the spec) says how each is serialized; the runtime builds and
/// sends the request exactly as `openapi-mcp proxy` does.
pub async fn petstore_show_pet_by_id(
    fwd: &Forwarder,
    route: &Route,
    args: Map<String, Value>,
) -> CallToolResult {
    let args: PetstoreShowPetByIdArgs = match super::parse(
        "petstore_show_pet_by_id",
        &args,
    ) {
        Ok(args) => args,
        Err(invalid) => return *invalid,
    };
    fwd.request(route).path("petId", &args.pet_id).send().await
}
/// Replace a pet
///
/// Arguments of the tool `petstore_update_pet` (`PUT /pets/{petId}`).
#[derive(Debug, Clone, ::serde::Deserialize, ::serde::Serialize)]
pub struct PetstoreUpdatePetArgs {
    /// The id of the pet
    ///
    /// Path parameter `petId`.
    #[serde(rename = "petId")]
    pub pet_id: i64,
    /// Request body property `name`.
    pub name: String,
    /// Request body property `tag`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tag: Option<String>,
    /// Request body property `status`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<Status>,
}
/// The tool `petstore_update_pet` (`PUT /pets/{petId}`): reads the arguments as [`PetstoreUpdatePetArgs`] and puts each one where the API
/// expects it. The route (from the spec) says how each is serialized; the runtime builds and
/// sends the request exactly as `openapi-mcp proxy` does.
pub async fn petstore_update_pet(
    fwd: &Forwarder,
    route: &Route,
    args: Map<String, Value>,
) -> CallToolResult {
    let args: PetstoreUpdatePetArgs = match super::parse("petstore_update_pet", &args) {
        Ok(args) => args,
        Err(invalid) => return *invalid,
    };
    fwd.request(route)
        .path("petId", &args.pet_id)
        .body_field("name", &args.name)
        .body_field_opt("tag", args.tag.as_ref())
        .body_field_opt("status", args.status.as_ref())
        .send()
        .await
}
/// Delete a pet
///
/// Arguments of the tool `petstore_delete_pet` (`DELETE /pets/{petId}`).
#[derive(Debug, Clone, ::serde::Deserialize, ::serde::Serialize)]
pub struct PetstoreDeletePetArgs {
    /// The id of the pet
    ///
    /// Path parameter `petId`.
    #[serde(rename = "petId")]
    pub pet_id: i64,
}
/// The tool `petstore_delete_pet` (`DELETE /pets/{petId}`): reads the arguments as [`PetstoreDeletePetArgs`] and puts each one where the API
/// expects it. The route (from the spec) says how each is serialized; the runtime builds and
/// sends the request exactly as `openapi-mcp proxy` does.
pub async fn petstore_delete_pet(
    fwd: &Forwarder,
    route: &Route,
    args: Map<String, Value>,
) -> CallToolResult {
    let args: PetstoreDeletePetArgs = match super::parse("petstore_delete_pet", &args) {
        Ok(args) => args,
        Err(invalid) => return *invalid,
    };
    fwd.request(route).path("petId", &args.pet_id).send().await
}
