// Search-quality task sets for `--mode dynamic` (the DEVELOPMENT set of #22: tune on these, and
// measure on held-out requests): (what a user asks for, the operationId that does it; `a|b` when
// either operation does it). Included by `tests/benches/dynamic.rs` and
// `tests/tests/e2e/dynamic.rs`. The tasks are phrased the way people ask, not copied from the
// operations' summaries; the later ones of each set use the user's words, not the API's.

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
    // In the user's words rather than the API's (#22).
    (
        "kick off the deploy workflow again",
        "actions/re-run-workflow",
    ),
    (
        "run only the failed jobs of a CI run one more time",
        "actions/re-run-workflow-failed-jobs",
    ),
    (
        "who is allowed to push to main",
        "repos/get-branch-protection|repos/list-collaborators",
    ),
    (
        "stop a build that is still running",
        "actions/cancel-workflow-run",
    ),
    ("close an issue", "issues/update"),
    ("make a repository private", "repos/update"),
    ("archive a repo", "repos/update"),
    ("get rid of a branch", "git/delete-ref"),
    (
        "require reviews before anyone merges into main",
        "repos/update-branch-protection|repos/update-pull-request-review-protection",
    ),
    (
        "what is the newest version released",
        "repos/get-latest-release",
    ),
    (
        "who starred my project",
        "activity/list-stargazers-for-repo",
    ),
    (
        "favorite a repository",
        "activity/star-repo-for-authenticated-user",
    ),
    ("how many people visited my repo", "repos/get-views"),
    (
        "what programming languages is this project written in",
        "repos/list-languages",
    ),
    (
        "show the history of changes on a branch",
        "repos/list-commits",
    ),
    (
        "diff between two branches",
        "repos/compare-commits-with-basehead|repos/compare-commits",
    ),
    ("hand over a repository to another owner", "repos/transfer"),
    (
        "give a teammate write access to a repo",
        "repos/add-collaborator",
    ),
    ("stop following someone", "users/unfollow"),
    (
        "upload my ssh key",
        "users/create-public-ssh-key-for-authenticated-user",
    ),
    ("assign an issue to someone", "issues/add-assignees"),
    ("approve a pull request", "pulls/create-review"),
    (
        "download the logs of a CI job",
        "actions/download-job-logs-for-workflow-run",
    ),
    (
        "is the build passing on this commit",
        "repos/get-combined-status-for-ref|checks/list-for-ref",
    ),
    (
        "store an API key for the actions of a repo",
        "actions/create-or-update-repo-secret",
    ),
    ("turn off a workflow", "actions/disable-workflow"),
    ("find code that contains a function name", "search/code"),
    ("thumbs up an issue", "reactions/create-for-issue"),
    ("bring my fork up to date", "repos/merge-upstream"),
    ("how much API quota do I have left", "rate-limit/get"),
    ("look up someone's profile", "users/get-by-username"),
    (
        "kick a member out of the organization",
        "orgs/remove-member|orgs/remove-membership-for-user",
    ),
    (
        "invite someone to join my organization",
        "orgs/create-invitation",
    ),
    ("show the project's readme", "repos/get-readme"),
    ("prevent further comments on an issue", "issues/lock"),
    ("list the open issues of a project", "issues/list-for-repo"),
    (
        "see the vulnerable dependencies of a repo",
        "dependabot/list-alerts-for-repo",
    ),
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
    // In the user's words rather than the API's (#22).
    (
        "point my domain at a new IP address",
        "dns-records-for-a-zone-patch-dns-record|dns-records-for-a-zone-update-dns-record",
    ),
    ("clear the cached files of my site", "zone-purge"),
    (
        "block an IP address from my site",
        "ip-access-rules-for-a-zone-create-an-ip-access-rule",
    ),
    (
        "deploy a worker script",
        "worker-script-upload-worker-module",
    ),
    ("make a new API token", "user-api-tokens-create-token"),
    ("remove my domain from cloudflare", "zones-0-delete"),
    (
        "redirect one URL to another with a page rule",
        "page-rules-create-a-page-rule",
    ),
    (
        "upload my own SSL certificate",
        "custom-ssl-for-a-zone-create-ssl-configuration",
    ),
];

/// For `stripe-spec3.json`.
pub const STRIPE_TASKS: &[(&str, &str)] = &[
    ("create a customer", "PostCustomers"),
    ("list invoices", "GetInvoices"),
    ("create a product", "PostProducts"),
    (
        "refund a payment",
        "PostRefunds|PostChargesChargeRefund|PostChargesChargeRefunds",
    ),
    ("charge a customer's card", "PostCharges|PostPaymentIntents"),
    (
        "cancel someone's subscription",
        "DeleteSubscriptionsSubscriptionExposedId|DeleteCustomersCustomerSubscriptionsSubscriptionExposedId",
    ),
    (
        "change the email address of a customer",
        "PostCustomersCustomer",
    ),
    ("sign up a new customer", "PostCustomers"),
    (
        "find a customer by email",
        "GetCustomersSearch|GetCustomers",
    ),
    ("how much money is in my account", "GetBalance"),
    ("send money to my bank account", "PostPayouts"),
    (
        "email an invoice to the customer",
        "PostInvoicesInvoiceSend",
    ),
    ("create a discount code", "PostCoupons|PostPromotionCodes"),
    ("set the price of a product", "PostPrices"),
    ("list everything I sell", "GetProducts"),
    (
        "respond to a chargeback with evidence",
        "PostDisputesDispute",
    ),
    (
        "save a card on file for a customer",
        "PostPaymentMethodsPaymentMethodAttach|PostCustomersCustomerSources|PostCustomersCustomerCards|PostSetupIntents",
    ),
    ("start a hosted checkout page", "PostCheckoutSessions"),
    ("mark an invoice as paid", "PostInvoicesInvoicePay"),
    ("void an invoice", "PostInvoicesInvoiceVoid"),
    ("get rid of a customer", "DeleteCustomersCustomer"),
    ("a shareable link to buy a product", "PostPaymentLinks"),
    ("get notified of events at my URL", "PostWebhookEndpoints"),
    ("what happened recently in my account", "GetEvents"),
    (
        "subscribe a customer to a monthly plan",
        "PostSubscriptions|PostCustomersCustomerSubscriptions",
    ),
    (
        "move a subscription to another plan",
        "PostSubscriptionsSubscriptionExposedId|PostCustomersCustomerSubscriptionsSubscriptionExposedId",
    ),
];

/// For `k8s-swagger-2.0.json`.
pub const K8S_TASKS: &[(&str, &str)] = &[
    ("list pods in a namespace", "listCoreV1NamespacedPod"),
    ("delete a pod", "deleteCoreV1NamespacedPod"),
    ("create a namespace", "createCoreV1Namespace"),
    (
        "scale a deployment to 5 replicas",
        "patchAppsV1NamespacedDeploymentScale|replaceAppsV1NamespacedDeploymentScale",
    ),
    ("get the logs of a pod", "readCoreV1NamespacedPodLog"),
    (
        "store a password for my app",
        "createCoreV1NamespacedSecret",
    ),
    (
        "put configuration values into the cluster",
        "createCoreV1NamespacedConfigMap",
    ),
    ("run a one-off batch job", "createBatchV1NamespacedJob"),
    (
        "schedule a task every night",
        "createBatchV1NamespacedCronJob",
    ),
    (
        "expose my app on a port inside the cluster",
        "createCoreV1NamespacedService",
    ),
    ("which machines are in the cluster", "listCoreV1Node"),
    (
        "roll out a new image version for a deployment",
        "patchAppsV1NamespacedDeployment|replaceAppsV1NamespacedDeployment",
    ),
    (
        "evict a pod from its node",
        "createCoreV1NamespacedPodEviction",
    ),
    (
        "cordon a node so nothing new is scheduled on it",
        "patchCoreV1Node",
    ),
    (
        "check whether I am allowed to create pods",
        "createAuthorizationV1SelfSubjectAccessReview",
    ),
    (
        "autoscale a deployment on CPU usage",
        "createAutoscalingV2NamespacedHorizontalPodAutoscaler|createAutoscalingV1NamespacedHorizontalPodAutoscaler",
    ),
    (
        "give a service account permissions in a namespace",
        "createRbacAuthorizationV1NamespacedRoleBinding",
    ),
    (
        "request a persistent disk for a pod",
        "createCoreV1NamespacedPersistentVolumeClaim",
    ),
    ("what version is the cluster running", "getCodeVersion"),
    (
        "recent events in a namespace",
        "listCoreV1NamespacedEvent|listEventsV1NamespacedEvent",
    ),
    (
        "route external HTTP traffic to a service",
        "createNetworkingV1NamespacedIngress",
    ),
];
