// Search-quality task sets for `--mode dynamic`: (what a user asks for, the operationId that does
// it). Included by `tests/benches/dynamic.rs` and `tests/tests/e2e/dynamic.rs`. The tasks are
// phrased the way people ask, not copied from the operations' summaries.

/// For `github-octokit-2026-3.0.json`.
pub const GITHUB_TASKS: &[(&str, &str)] = &[
    ("create an issue in a repository", "issues/create"),
    ("open a pull request", "pulls/create"),
    ("merge a pull request", "pulls/merge"),
    (
        "create a new repository for my account",
        "repos/create-for-authenticated-user",
    ),
    ("comment on an issue", "issues/create-comment"),
    ("list my repositories", "repos/list-for-authenticated-user"),
    ("read the contents of a file in a repo", "repos/get-content"),
    (
        "create or update a file in a repository",
        "repos/create-or-update-file-contents",
    ),
    (
        "who am I: get the authenticated user",
        "users/get-authenticated",
    ),
    ("search repositories by keyword", "search/repos"),
    ("publish a new release", "repos/create-release"),
    (
        "list the workflow runs of a repository",
        "actions/list-workflow-runs-for-repo",
    ),
    (
        "manually trigger a GitHub Actions workflow",
        "actions/create-workflow-dispatch",
    ),
    ("add labels to an issue", "issues/add-labels"),
    ("fork a repository", "repos/create-fork"),
    (
        "star a repository",
        "activity/star-repo-for-authenticated-user",
    ),
    ("delete a repository", "repos/delete"),
    ("list the branches of a repository", "repos/list-branches"),
    ("files changed in a pull request", "pulls/list-files"),
    ("list the members of an organization", "orgs/list-members"),
    (
        "add a collaborator to a repository",
        "repos/add-collaborator",
    ),
    ("create a webhook for a repository", "repos/create-webhook"),
    (
        "ask someone to review a pull request",
        "pulls/request-reviewers",
    ),
    ("get a single commit", "repos/get-commit"),
];

/// For `cloudflare-api-3.0.json`.
pub const CLOUDFLARE_TASKS: &[(&str, &str)] = &[
    ("list my zones", "zones-get"),
    ("add a new domain zone", "zones-post"),
    (
        "create a DNS record",
        "dns-records-for-a-zone-create-dns-record",
    ),
    (
        "list DNS records of a zone",
        "dns-records-for-a-zone-list-dns-records",
    ),
    (
        "delete a DNS record",
        "dns-records-for-a-zone-delete-dns-record",
    ),
    ("purge the cache of a zone", "zone-purge"),
    ("list workers scripts", "worker-script-list-workers"),
    ("create an R2 bucket", "r2-create-bucket"),
    ("verify an API token", "user-api-tokens-verify-token"),
    (
        "create a Cloudflare tunnel",
        "cloudflare-tunnel-create-a-cloudflare-tunnel",
    ),
    (
        "write a value to a KV namespace",
        "workers-kv-namespace-write-key-value-pair-with-metadata",
    ),
    ("list accounts", "accounts-list-accounts"),
];
