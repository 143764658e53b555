"""requests.py HELDOUT_JSON OUT_DIR: the requests of a held-out set, without their answers, one
file per API (OUT_DIR/requests-<api>.txt: number TAB request), for the agents."""
import json, os, sys
KEYS = {'github-octokit-2026-3.0.json': 'github', 'stripe-spec3.json': 'stripe',
        'cloudflare-api-3.0.json': 'cloudflare', 'k8s-swagger-2.0.json': 'kubernetes',
        'slack-web-api-2.0.json': 'slack', 'discord-api-3.1.json': 'discord',
        'twilio-api-v2010-3.0.json': 'twilio', 'box-api-3.0.json': 'box',
        'openai-api-3.1.yaml': 'openai', 'digitalocean-3.0/DigitalOcean-public.v2.yaml': 'digitalocean'}
heldout, out = sys.argv[1:3]
os.makedirs(out, exist_ok=True)
for spec, cases in json.load(open(heldout)).items():
    with open(os.path.join(out, f'requests-{KEYS[spec]}.txt'), 'w') as f:
        for i, c in enumerate(cases):
            f.write(f"{i}\t{c['request']}\n")
