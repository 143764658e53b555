// The job API behind tasks.yaml (tests/conformance/run.sh, the Tasks extension scenarios): POST
// /api/compute?seconds=N&label=L and POST /api/failing-job answer 202 Accepted with a Location
// (/api/jobs/ID) and Retry-After: 1; GET /api/jobs/ID says running until the job's time is up,
// then succeeded (or failed, for failing-job); DELETE /api/jobs/ID cancels it; DELETE
// /api/files/NAME is a job done at once (202 too); GET
// /api/greet?name=N answers "Hello, N!"; GET /api/_requests lists the requests so far (for the
// checks; not in the spec). Listens on 127.0.0.1 (a free port, printed).
import http from 'node:http';

const jobs = new Map();
const requests = [];
let next = 0;

const server = http.createServer((req, res) => {
  const url = new URL(req.url, 'http://127.0.0.1');
  const path = url.pathname;
  const json = (status, body, headers = {}) => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(JSON.stringify(body));
  };
  req.resume();
  req.on('end', () => {
    if (req.method === 'GET' && path === '/api/_requests') {
      json(200, requests);
      return;
    }
    requests.push(`${req.method} ${path}`);
    if (req.method === 'GET' && path === '/api/greet') {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end(`Hello, ${url.searchParams.get('name') ?? 'world'}!`);
      return;
    }
    if (req.method === 'POST' && (path === '/api/compute' || path === '/api/failing-job')) {
      const fail = path === '/api/failing-job';
      const seconds = fail ? 1 : Number(url.searchParams.get('seconds') ?? 0);
      const id = `job-${++next}`;
      jobs.set(id, {
        end: Date.now() + (Number.isFinite(seconds) ? seconds : 0) * 1000,
        fail,
        label: url.searchParams.get('label') ?? '',
        cancelled: false,
      });
      json(202, { id, status: 'queued' }, { location: `/api/jobs/${id}`, 'retry-after': '1' });
      return;
    }
    if (req.method === 'DELETE' && path.startsWith('/api/files/')) {
      const id = `job-${++next}`;
      jobs.set(id, { end: Date.now(), fail: false, label: decodeURIComponent(path.slice(11)), cancelled: false });
      json(202, { id, status: 'queued' }, { location: `/api/jobs/${id}`, 'retry-after': '1' });
      return;
    }
    const m = path.match(/^\/api\/jobs\/([^/]+)$/);
    const job = m && jobs.get(m[1]);
    if (!job) {
      json(404, { error: 'no such job' });
      return;
    }
    if (req.method === 'DELETE') {
      job.cancelled = true;
      res.writeHead(202);
      res.end();
      return;
    }
    if (req.method !== 'GET') {
      json(405, { error: 'method not allowed' });
      return;
    }
    if (job.cancelled) {
      json(200, { id: m[1], status: 'cancelled' });
    } else if (Date.now() < job.end) {
      json(200, { id: m[1], status: 'running' }, { 'retry-after': '1' });
    } else if (job.fail) {
      json(200, { id: m[1], status: 'failed', error: 'the job failed' });
    } else {
      json(200, { id: m[1], status: 'succeeded', result: `computed ${job.label}` });
    }
  });
});

server.listen(0, '127.0.0.1', () => {
  console.log(`tasks upstream listening on http://127.0.0.1:${server.address().port}/api`);
});
