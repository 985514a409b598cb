//! The checked-in OpenAPI document must match the one the code generates.

#[test]
fn checked_in_openapi_document_is_up_to_date() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/openapi/openapi.json");
    let checked_in = std::fs::read_to_string(path).expect("openapi/openapi.json exists");
    let generated = rlsolver::api::openapi::openapi_json();
    assert!(checked_in == generated, "openapi/openapi.json is stale: run `make openapi` and commit it");
}
