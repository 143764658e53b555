// The second development set of #22 (tuned on, like `dynamic_tasks.rs`): requests written blind in
// `dynamic_requests2.md` (committed before any answer was looked up or any ranking seen), then the
// operations that do them looked up in the specs. `a|b|c`: any of them does it. Included by
// `tests/benches/dynamic.rs` and `tests/tests/e2e/dynamic.rs`.
//
// Dropped while grading (no REST operation does it in that spec): GitHub 29 "mark the pull request
// as ready" (GraphQL only), Cloudflare 25 "see the firewall events for my site" (GraphQL only).

/// For `github-octokit-2026-3.0.json`.
pub const GITHUB_TASKS2: &[(&str, &str)] = &[
    ("make the repo private", "repos/update"),
    ("turn off the wiki for this project", "repos/update"),
    (
        "who starred my project",
        "activity/list-stargazers-for-repo",
    ),
    (
        "stop watching this repository",
        "activity/delete-repo-subscription",
    ),
    (
        "tag v2.1.0 as the latest version with release notes",
        "repos/create-release",
    ),
    (
        "what changed between the main branch and my feature branch",
        "repos/compare-commits-with-basehead|repos/compare-commits",
    ),
    (
        "lock the conversation on issue 42 because it got heated",
        "issues/lock",
    ),
    (
        "close the bug report about the login crash",
        "issues/update",
    ),
    (
        "give the ops team admin rights to the infra repo",
        "teams/add-or-update-repo-permissions-in-org|teams/add-or-update-repo-permissions-legacy",
    ),
    (
        "block a user who keeps spamming my repos",
        "users/block|orgs/block-user",
    ),
    (
        "download the build artifacts from the last CI run",
        "actions/list-workflow-run-artifacts|actions/download-artifact|actions/list-artifacts-for-repo",
    ),
    (
        "cancel the workflow that is stuck",
        "actions/cancel-workflow-run|actions/force-cancel-workflow-run",
    ),
    (
        "show the logs of the failed job",
        "actions/download-job-logs-for-workflow-run",
    ),
    (
        "store an API token as a secret for actions",
        "actions/create-or-update-repo-secret|actions/create-or-update-org-secret|actions/create-or-update-environment-secret",
    ),
    (
        "protect main so nobody can push directly",
        "repos/update-branch-protection|repos/create-repo-ruleset",
    ),
    (
        "approve this pull request",
        "pulls/create-review|pulls/submit-review",
    ),
    (
        "leave an inline comment on line 10 of the diff",
        "pulls/create-review-comment",
    ),
    (
        "who has contributed the most to this repo",
        "repos/list-contributors|repos/get-contributors-stats",
    ),
    (
        "find issues that mention memory leak",
        "search/issues-and-pull-requests",
    ),
    (
        "invite a new person to my organization",
        "orgs/create-invitation|orgs/set-membership-for-user",
    ),
    (
        "remove someone from the org",
        "orgs/remove-member|orgs/remove-membership-for-user",
    ),
    ("make a gist with this snippet", "gists/create"),
    ("what are the open milestones", "issues/list-milestones"),
    (
        "which languages is the repo written in",
        "repos/list-languages",
    ),
    (
        "set a status check on a commit as passed",
        "repos/create-commit-status",
    ),
    (
        "move the repository to another organization",
        "repos/transfer",
    ),
    (
        "see my notifications",
        "activity/list-notifications-for-authenticated-user",
    ),
    (
        "add an SSH key to my account",
        "users/create-public-ssh-key-for-authenticated-user",
    ),
    ("rename the default branch", "repos/rename-branch"),
];

/// For `stripe-spec3.json`.
pub const STRIPE_TASKS2: &[(&str, &str)] = &[
    (
        "charge a customer 20 dollars",
        "PostPaymentIntents|PostCharges",
    ),
    (
        "give the money back for this payment",
        "PostRefunds|PostChargesChargeRefunds|PostChargesChargeRefund",
    ),
    (
        "sign a user up for the monthly plan",
        "PostSubscriptions|PostCustomersCustomerSubscriptions",
    ),
    (
        "stop someone's subscription",
        "DeleteSubscriptionsSubscriptionExposedId|DeleteCustomersCustomerSubscriptionsSubscriptionExposedId",
    ),
    ("who are my customers", "GetCustomers"),
    (
        "look up a customer by their email",
        "GetCustomers|GetCustomersSearch",
    ),
    ("send the invoice to the client", "PostInvoicesInvoiceSend"),
    (
        "change the credit card on file for a customer",
        "PostCustomersCustomer|PostPaymentMethodsPaymentMethodAttach|PostCustomersCustomerSources",
    ),
    ("how much money do I have in my account", "GetBalance"),
    ("pay out my balance to my bank", "PostPayouts"),
    (
        "make a discount code for 20 percent off",
        "PostCoupons|PostPromotionCodes",
    ),
    ("add a new product to sell", "PostProducts"),
    (
        "set the price of the product to 10 euros a month",
        "PostPrices",
    ),
    (
        "a customer disputes a charge, send evidence",
        "PostDisputesDispute",
    ),
    (
        "list the charges that failed",
        "GetCharges|GetChargesSearch",
    ),
    (
        "create a checkout page for a one-time purchase",
        "PostCheckoutSessions",
    ),
    (
        "void an invoice that was sent by mistake",
        "PostInvoicesInvoiceVoid",
    ),
    (
        "change the quantity on an existing subscription",
        "PostSubscriptionsSubscriptionExposedId|PostSubscriptionItemsItem|PostCustomersCustomerSubscriptionsSubscriptionExposedId",
    ),
    ("see the events that happened recently", "GetEvents"),
    (
        "register a url to receive notifications of payments",
        "PostWebhookEndpoints",
    ),
    ("create a connected account for a seller", "PostAccounts"),
    ("move money to a connected account", "PostTransfers"),
    ("generate a payment link I can share", "PostPaymentLinks"),
    (
        "remove a saved card from a customer",
        "PostPaymentMethodsPaymentMethodDetach|DeleteCustomersCustomerSourcesId",
    ),
    ("delete a customer", "DeleteCustomersCustomer"),
    (
        "list every invoice of a customer",
        "GetInvoices|GetInvoicesSearch",
    ),
    ("add a tax id to a customer", "PostCustomersCustomerTaxIds"),
    ("when will the next payout arrive", "GetPayouts"),
];

const CF_BLOCK: &str = "ip-access-rules-for-a-zone-create-an-ip-access-rule|ip-access-rules-for-an-account-create-an-ip-access-rule|ip-access-rules-for-a-user-create-an-ip-access-rule|firewall-rules-create-firewall-rules|createZoneRuleset|updateZoneEntrypointRuleset";
const CF_SETTING: &str = "zone-settings-edit-single-setting|zone-settings-edit-zone-settings-info";

/// For `cloudflare-api-3.0.json`.
pub const CLOUDFLARE_TASKS2: &[(&str, &str)] = &[
    ("add a new website to my account", "zones-post"),
    (
        "point www to my server's IP address",
        "dns-records-for-a-zone-create-dns-record",
    ),
    (
        "list all the DNS entries of my domain",
        "dns-records-for-a-zone-list-dns-records",
    ),
    ("clear the cache for my site", "zone-purge"),
    ("turn on always use https", CF_SETTING),
    ("block visitors from a country", CF_BLOCK),
    ("put the site in under attack mode", CF_SETTING),
    (
        "create a worker script",
        "worker-script-upload-worker-module",
    ),
    ("list my zones", "zones-get"),
    (
        "make an API token with limited permissions",
        "user-api-tokens-create-token",
    ),
    (
        "set up a redirect from the old domain to the new one",
        "page-rules-create-a-page-rule|createZoneRuleset|updateZoneEntrypointRuleset|createAccountRuleset|updateAccountEntrypointRuleset",
    ),
    ("create a page rule", "page-rules-create-a-page-rule"),
    (
        "delete a DNS record",
        "dns-records-for-a-zone-delete-dns-record",
    ),
    ("block an IP address from reaching my site", CF_BLOCK),
    ("set the SSL mode to strict", CF_SETTING),
    (
        "create a tunnel to my home server",
        "cloudflare-tunnel-create-a-cloudflare-tunnel|argo-tunnel-create-an-argo-tunnel",
    ),
    (
        "list the members of my account",
        "account-members-list-members",
    ),
    (
        "add a KV namespace",
        "workers-kv-namespace-create-a-namespace",
    ),
    (
        "write a value into a key value store",
        "workers-kv-namespace-write-key-value-pair-with-metadata|workers-kv-namespace-write-multiple-key-value-pairs",
    ),
    ("create an R2 bucket", "r2-create-bucket"),
    (
        "upload a custom certificate",
        "custom-ssl-for-a-zone-create-ssl-configuration",
    ),
    (
        "set up a load balancer between two servers",
        "load-balancers-create-load-balancer|account-load-balancer-pools-create-pool|load-balancer-pools-create-pool",
    ),
    (
        "check whether the zone is active",
        "zones-0-get|put-zones-zone_id-activation_check",
    ),
    (
        "enable development mode so changes show right away",
        CF_SETTING,
    ),
    ("change the minimum TLS version", CF_SETTING),
    ("create a Pages project", "pages-project-create-project"),
];

/// For `k8s-swagger-2.0.json`.
pub const K8S_TASKS2: &[(&str, &str)] = &[
    (
        "list the pods in the default namespace",
        "listCoreV1NamespacedPod",
    ),
    ("show the logs of a pod", "readCoreV1NamespacedPodLog"),
    (
        "scale the web deployment to 5 replicas",
        "patchAppsV1NamespacedDeploymentScale|replaceAppsV1NamespacedDeploymentScale|patchAppsV1NamespacedDeployment",
    ),
    ("delete a pod that is stuck", "deleteCoreV1NamespacedPod"),
    ("create a namespace for staging", "createCoreV1Namespace"),
    ("what nodes are in the cluster", "listCoreV1Node"),
    (
        "mark a node unschedulable",
        "patchCoreV1Node|replaceCoreV1Node",
    ),
    (
        "store a database password as a secret",
        "createCoreV1NamespacedSecret",
    ),
    (
        "create a config map with app settings",
        "createCoreV1NamespacedConfigMap",
    ),
    (
        "expose the deployment with a service",
        "createCoreV1NamespacedService",
    ),
    (
        "roll out a new image for the deployment",
        "patchAppsV1NamespacedDeployment|replaceAppsV1NamespacedDeployment",
    ),
    ("run a one-off job", "createBatchV1NamespacedJob"),
    (
        "schedule a backup every night",
        "createBatchV1NamespacedCronJob",
    ),
    (
        "how much cpu quota is left in the namespace",
        "listCoreV1NamespacedResourceQuota|readCoreV1NamespacedResourceQuota|readCoreV1NamespacedResourceQuotaStatus",
    ),
    (
        "list the events in the namespace",
        "listCoreV1NamespacedEvent|listEventsV1NamespacedEvent",
    ),
    (
        "create a persistent volume claim of 10 gigabytes",
        "createCoreV1NamespacedPersistentVolumeClaim",
    ),
    (
        "evict a pod from a node",
        "createCoreV1NamespacedPodEviction",
    ),
    (
        "give a service account permission to read pods",
        "createRbacAuthorizationV1NamespacedRole|createRbacAuthorizationV1NamespacedRoleBinding",
    ),
    (
        "list all the ingresses",
        "listNetworkingV1IngressForAllNamespaces|listNetworkingV1NamespacedIngress",
    ),
    (
        "set up autoscaling for the deployment",
        "createAutoscalingV2NamespacedHorizontalPodAutoscaler|createAutoscalingV1NamespacedHorizontalPodAutoscaler",
    ),
    (
        "see the status of a deployment rollout",
        "readAppsV1NamespacedDeploymentStatus|readAppsV1NamespacedDeployment",
    ),
    ("list the storage classes", "listStorageV1StorageClass"),
    (
        "delete all the pods with a label",
        "deleteCoreV1CollectionNamespacedPod",
    ),
    (
        "get a token for a service account",
        "createCoreV1NamespacedServiceAccountToken",
    ),
    (
        "create a network policy that blocks traffic",
        "createNetworkingV1NamespacedNetworkPolicy",
    ),
    (
        "which custom resource types are installed",
        "listApiextensionsV1CustomResourceDefinition",
    ),
    ("add a label to a node", "patchCoreV1Node|replaceCoreV1Node"),
];
