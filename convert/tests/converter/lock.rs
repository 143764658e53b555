//! Names lockfile (`convert/src/lock.rs`) on real conversions: published names survive added,
//! removed and renamed operations; and `diff` over the fixture pair `specs/diff-*.yaml`.

use openapi_mcp_convert::ToolOptions;
use openapi_mcp_convert::diff::diff;
use openapi_mcp_convert::lock::Lock;

use super::support::{convert_fixture, convert_inline, names, tool};

/// An inline spec titled "Shop" with one operation per (method, path, operationId).
fn spec(ops: &[(&str, &str, &str)]) -> String {
    let mut s = String::from("openapi: 3.0.3\ninfo: {title: Shop, version: '1'}\npaths:\n");
    let mut paths: Vec<&str> = Vec::new();
    for (_, p, _) in ops {
        if !paths.contains(p) {
            paths.push(p);
        }
    }
    for p in paths {
        s.push_str(&format!("  '{p}':\n"));
        for (m, _, id) in ops.iter().filter(|(_, q, _)| q == &p) {
            s.push_str(&format!(
                "    {m}:\n      operationId: {id}\n      responses: {{'200': {{description: ok}}}}\n"
            ));
        }
    }
    s
}

#[test]
fn added_operation_does_not_take_a_published_name() {
    let v1 = convert_inline(&spec(&[
        ("get", "/users/{id}", "get_user"),
        ("get", "/orders", "listOrders"),
    ]));
    assert_eq!(names(&v1), ["shop_get_user", "shop_list_orders"]);
    let lock = Lock::empty("names.json").updated(&v1.tools);
    // v2 adds, before it in the document, an operation whose name collides after snake_case.
    let v2_text = spec(&[
        ("get", "/accounts/{id}", "getUser"),
        ("get", "/users/{id}", "get_user"),
        ("get", "/orders", "listOrders"),
    ]);
    // Without the lock the newcomer takes the plain name and the published tool is renamed.
    let unlocked = convert_inline(&v2_text);
    assert_eq!(tool(&unlocked, "getUser").tool().name, "shop_get_user");
    assert_ne!(tool(&unlocked, "get_user").tool().name, "shop_get_user");
    // With it the published names stay; the newcomer gets a stable hashed variant.
    let mut v2 = convert_inline(&v2_text);
    let report = lock
        .apply(&mut v2.tools, &ToolOptions::default())
        .expect("lock applies");
    assert_eq!(tool(&v2, "get_user").tool().name, "shop_get_user");
    assert_eq!(tool(&v2, "listOrders").tool().name, "shop_list_orders");
    let newcomer = tool(&v2, "getUser").tool().name.to_string();
    assert!(newcomer.starts_with("shop_get_user_") && newcomer.len() == "shop_get_user_".len() + 6);
    assert_eq!(report.moved.len(), 1, "{report:?}");
    assert_eq!(report.added.len(), 1);
    // Deterministic: the same inputs give the same name.
    let mut again = convert_inline(&v2_text);
    lock.apply(&mut again.tools, &ToolOptions::default())
        .expect("lock applies");
    assert_eq!(names(&again), names(&v2));

    // v3 removes listOrders: other names unchanged, the entry stays (removed) in the lock.
    let lock2 = lock.updated(&v2.tools);
    let mut v3 = convert_inline(&spec(&[
        ("get", "/accounts/{id}", "getUser"),
        ("get", "/users/{id}", "get_user"),
    ]));
    let r3 = lock2
        .apply(&mut v3.tools, &ToolOptions::default())
        .expect("lock applies");
    assert_eq!(names(&v3), [newcomer.as_str(), "shop_get_user"]);
    assert_eq!(
        r3.removed,
        [("listOrders".to_string(), "shop_list_orders".to_string())]
    );
    let lock3 = lock2.updated(&v3.tools);
    assert!(lock3.entries["listOrders"].removed);
    // A new operation whose rules-given name is the removed one's does not reuse it.
    let mut v4 = convert_inline(&spec(&[
        ("get", "/accounts/{id}", "getUser"),
        ("get", "/users/{id}", "get_user"),
        ("get", "/archive/orders", "list_orders"),
    ]));
    lock3
        .apply(&mut v4.tools, &ToolOptions::default())
        .expect("lock applies");
    let reused = tool(&v4, "list_orders").tool().name.to_string();
    assert_ne!(reused, "shop_list_orders");
    assert!(reused.starts_with("shop_list_orders_"), "{reused}");
    let lock4 = lock3.updated(&v4.tools);
    assert_eq!(lock4.entries["listOrders"].name, "shop_list_orders");
    assert!(lock4.entries["listOrders"].removed);
}

#[test]
fn renamed_operation_id_keeps_the_locked_name_and_diff_sees_no_rename() {
    let old = convert_fixture("diff-old.yaml");
    let lock = Lock::empty("names.yaml").updated(&old.tools);
    let text = lock.to_text();
    let lock = Lock::parse("names.yaml", &text, 64).expect("written lock parses");
    let mut new = convert_fixture("diff-new.yaml");
    assert_eq!(tool(&new, "fetchItem").tool().name, "inventory_fetch_item");
    let unlocked = diff(&old.tools, &new.tools);
    assert_eq!(unlocked.renamed.len(), 1, "{unlocked:?}");

    let report = lock
        .apply(&mut new.tools, &ToolOptions::default())
        .expect("lock applies");
    assert_eq!(tool(&new, "fetchItem").tool().name, "inventory_get_item");
    assert_eq!(
        report.rekeyed,
        [("getItem".to_string(), "fetchItem".to_string())]
    );
    let mut old_locked = convert_fixture("diff-old.yaml");
    lock.apply(&mut old_locked.tools, &ToolOptions::default())
        .expect("lock applies");
    let d = diff(&old_locked.tools, &new.tools);
    assert!(d.renamed.is_empty(), "{d:?}");
    assert_eq!(d.removed.len(), 1);
    assert_eq!(d.removed[0].name, "inventory_delete_item");
    assert_eq!(d.added.len(), 1);
    assert!(d.is_breaking());
    // The updated lock moved the entry to the new operationId and kept deleteItem, removed.
    let next = lock.updated(&new.tools);
    assert!(!next.entries.contains_key("getItem"));
    assert_eq!(next.entries["fetchItem"].name, "inventory_get_item");
    assert!(next.entries["deleteItem"].removed);
    assert!(next.to_text().contains("removed: true"));
}

#[test]
fn fixture_pair_has_every_kind_of_change() {
    let d = diff(
        &convert_fixture("diff-old.yaml").tools,
        &convert_fixture("diff-new.yaml").tools,
    );
    let kinds = |v: &[openapi_mcp_convert::diff::Change]| {
        let mut k: Vec<(String, &str)> = v.iter().map(|c| (c.argument.clone(), c.kind)).collect();
        k.sort();
        k
    };
    assert_eq!(
        kinds(&d.breaking),
        [
            ("count".to_string(), "type_changed"),
            ("expand".to_string(), "wire_name_changed"),
            ("legacy".to_string(), "argument_removed"),
            ("limit".to_string(), "became_required"),
            ("metadata".to_string(), "additional_properties_tightened"),
            ("reason".to_string(), "became_required"),
            ("sku".to_string(), "new_required_argument"),
            ("sort".to_string(), "enum_values_removed"),
            ("tenant".to_string(), "location_changed"),
        ]
    );
    assert_eq!(
        kinds(&d.non_breaking),
        [
            ("note".to_string(), "description_changed"),
            ("page".to_string(), "new_optional_argument"),
            ("price".to_string(), "type_widened"),
            ("q".to_string(), "description_changed"),
            ("sort".to_string(), "enum_values_added"),
            ("status".to_string(), "enum_values_added"),
        ]
    );
}

#[test]
fn invalid_locked_name_for_a_shorter_limit_is_an_error() {
    let old = convert_fixture("diff-old.yaml");
    let text = Lock::empty("names.json").updated(&old.tools).to_text();
    // `inventory_get_item_history`-length names are fine at 64; at 16 they are not.
    let e = Lock::parse("names.json", &text, 16).expect_err("names over 16 chars");
    let msg = e.to_string();
    assert!(
        msg.contains("names.json") && msg.contains("operations.createItem.name"),
        "{msg}"
    );
}
