#!/usr/bin/env python3
"""The one tool of the agent-in-the-loop evaluation (README.md here): the server's real
`search_operations`, through `openapi-mcp proxy SPEC --mode dynamic` over stdio.

    search.py API QUERY [AREA]   one search (limit 10): method, path, tool name, summary, required args
    search.py API --areas        the server's instructions (the API's areas)

OPENAPI_MCP: the binary (default: the workspace's target/release/openapi-mcp); specs are read from
../shared/specs beside the repository."""
import json, os, subprocess, sys
HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, '..', '..', '..'))
BIN = os.environ.get('OPENAPI_MCP', os.path.join(REPO, 'target', 'release', 'openapi-mcp'))
SPECS_DIR = os.path.join(REPO, '..', 'shared', 'specs')
SPECS = {'github': 'github-octokit-2026-3.0.json', 'stripe': 'stripe-spec3.json',
         'cloudflare': 'cloudflare-api-3.0.json', 'kubernetes': 'k8s-swagger-2.0.json',
         'slack': 'slack-web-api-2.0.json', 'discord': 'discord-api-3.1.json',
         'twilio': 'twilio-api-v2010-3.0.json', 'box': 'box-api-3.0.json',
         'openai': 'openai-api-3.1.yaml', 'digitalocean': 'digitalocean-3.0/DigitalOcean-public.v2.yaml'}
api = sys.argv[1]
spec = os.path.join(SPECS_DIR, SPECS[api])
p = subprocess.Popen([BIN, 'proxy', spec, '--mode', 'dynamic', '--base-url', 'http://127.0.0.1:9'],
                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
def send(m):
    p.stdin.write(json.dumps(m) + '\n'); p.stdin.flush()
def recv(id):
    while True:
        l = p.stdout.readline()
        if not l: sys.exit('server exited')
        m = json.loads(l)
        if m.get('id') == id: return m
send({'jsonrpc': '2.0', 'id': 1, 'method': 'initialize', 'params': {'protocolVersion': '2025-11-25', 'capabilities': {}, 'clientInfo': {'name': 'probe', 'version': '0'}}})
init = recv(1)
send({'jsonrpc': '2.0', 'method': 'notifications/initialized'})
if sys.argv[2] == '--areas':
    print(init['result'].get('instructions', ''))
else:
    args = {'query': sys.argv[2], 'limit': 10}
    if len(sys.argv) > 3: args['area'] = sys.argv[3]
    send({'jsonrpc': '2.0', 'id': 2, 'method': 'tools/call', 'params': {'name': 'search_operations', 'arguments': args}})
    r = recv(2)['result']
    sc = r.get('structuredContent')
    if sc:
        for h in sc['results']:
            print(f"{h['method']} {h['path']}  [{h['name']}] {h['summary']} | required: {h.get('required_arguments','')}")
    else:
        print(r['content'][0]['text'])
p.stdin.close(); p.terminate()
