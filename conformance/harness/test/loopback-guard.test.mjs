// Tests for loopback-guard.mjs. Run through the preload itself, as the
// harness runs the suite:
//
//   node --import ./loopback-guard.mjs --test test/
//
// Every test here only ever reaches 127.0.0.1: the non-loopback targets are
// refused by the guard before any packet or DNS query is sent, and the tests
// check exactly that.

import assert from 'node:assert/strict';
import dgram from 'node:dgram';
import dns from 'node:dns';
import http from 'node:http';
import net, { connect as namedConnect } from 'node:net';
import { once } from 'node:events';
import { test as nodeTest } from 'node:test';
import tls from 'node:tls';
import { request as undiciRequest } from 'undici';

const guard = globalThis[Symbol.for('mcpstack.loopbackGuard')];

// test runs fn only when the guard is loaded: without it the tests below
// would try to reach other machines, so they fail without trying.
function test(name, fn) {
  nodeTest(name, (t) => {
    assert.ok(guard, 'loopback-guard is not loaded: run with node --import ./loopback-guard.mjs --test');
    return fn(t);
  });
}

function isGuardError(err) {
  return err instanceof Error && err.loopbackGuard === true && /^loopback-guard: /.test(err.message);
}

async function listenAddress(server, ...args) {
  server.listen(...args);
  await once(server, 'listening');
  const addr = server.address();
  server.close();
  return addr.address;
}

test('the guard is loaded by --import', () => {
  assert.equal(typeof guard, 'object');
  assert.ok(Array.isArray(guard.refused));
});

test('listeners bind 127.0.0.1', async (t) => {
  const cases = [
    { name: 'listen()', args: [] },
    { name: 'listen(cb)', args: [() => {}] },
    { name: 'listen(0)', args: [0] },
    { name: 'listen("0")', args: ['0'] },
    { name: 'listen(0, cb)', args: [0, () => {}] },
    { name: 'listen(0, "0.0.0.0")', args: [0, '0.0.0.0'] },
    { name: 'listen(0, "::")', args: [0, '::'] },
    { name: 'listen(0, "")', args: [0, ''] },
    { name: 'listen(0, "192.0.2.1")', args: [0, '192.0.2.1'] },
    { name: 'listen({port: 0})', args: [{ port: 0 }] },
    { name: 'listen({port: 0, host: "::"})', args: [{ port: 0, host: '::' }] },
    { name: 'listen({port: 0, host: "0.0.0.0"})', args: [{ port: 0, host: '0.0.0.0' }] },
  ];
  for (const c of cases) {
    await t.test(c.name, async () => {
      assert.equal(await listenAddress(net.createServer(), ...c.args), '127.0.0.1');
    });
  }
  // The suite does `server.listen(0).address().port` with no await: a
  // rewritten listen must bind before it returns, as a host-less one does.
  const syncCases = [
    { name: 'listen(0)', args: [0] },
    { name: 'listen()', args: [] },
    { name: 'listen(0, "0.0.0.0")', args: [0, '0.0.0.0'] },
    { name: 'listen({port: 0})', args: [{ port: 0 }] },
  ];
  for (const c of syncCases) {
    await t.test(`${c.name} binds before it returns`, async () => {
      const server = http.createServer();
      const listening = once(server, 'listening');
      const addr = server.listen(...c.args).address();
      await listening;
      server.close();
      assert.ok(addr, 'address() is null right after listen()');
      assert.equal(addr.address, '127.0.0.1');
      assert.ok(addr.port > 0);
    });
  }
  await t.test('http.createServer().listen(0)', async () => {
    assert.equal(await listenAddress(http.createServer(), 0), '127.0.0.1');
  });
  await t.test('listen(0, "::1") stays on ::1', async () => {
    const server = net.createServer();
    server.on('error', () => {}); // a machine without IPv6 loopback
    try {
      assert.equal(await listenAddress(server, 0, '::1'), '::1');
    } catch (err) {
      if (err.code !== 'EADDRNOTAVAIL') throw err;
    }
  });
});

test('connections to other hosts fail at once, before DNS', async (t) => {
  const targets = [
    { host: '10.0.0.1', port: 80 },
    { host: 'example.com', port: 443 },
    { host: 'conformance-test.local', port: 443 },
    { host: '0.0.0.0', port: 80 },
    { host: '127.0.0.2', port: 80 },
  ];
  const connectors = {
    'net.connect(options)': (h, lookup) => net.connect({ host: h.host, port: h.port, lookup }),
    'net.createConnection(port, host)': (h) => net.createConnection(h.port, h.host),
    'named import connect': (h, lookup) => namedConnect({ host: h.host, port: h.port, lookup }),
    'new Socket().connect': (h, lookup) => new net.Socket().connect({ host: h.host, port: h.port, lookup }),
    'tls.connect': (h, lookup) => tls.connect({ host: h.host, port: h.port, lookup, servername: 'x' }),
  };
  for (const h of targets) {
    for (const [name, dial] of Object.entries(connectors)) {
      await t.test(`${name} ${h.host}`, async () => {
        let lookups = 0;
        const lookup = (...args) => {
          lookups++;
          args.at(-1)(new Error('lookup must not be called'));
        };
        const socket = dial(h, lookup);
        const [err] = await once(socket, 'error');
        assert.ok(isGuardError(err), `unexpected error: ${err && err.message}`);
        assert.equal(err.code, 'ECONNREFUSED');
        assert.equal(lookups, 0, 'a DNS lookup was attempted');
        assert.ok(socket.destroyed);
      });
    }
  }
});

test('fetch and undici refuse other hosts', async (t) => {
  await t.test('fetch https://conformance-test.local/', async () => {
    const err = await fetch('https://conformance-test.local/client-metadata.json').then(
      () => assert.fail('fetch succeeded'),
      (e) => e,
    );
    assert.ok(isGuardError(err.cause), `unexpected cause: ${err.cause && err.cause.message}`);
  });
  await t.test('undici.request http://10.0.0.1/', async () => {
    const err = await undiciRequest('http://10.0.0.1/').then(
      () => assert.fail('request succeeded'),
      (e) => e,
    );
    assert.ok(isGuardError(err) || isGuardError(err.cause), `unexpected error: ${err.message}`);
  });
});

test('DNS answers only loopback names', async (t) => {
  await t.test('dns.lookup example.com', async () => {
    const err = await new Promise((resolve) => dns.lookup('example.com', (e) => resolve(e)));
    assert.ok(isGuardError(err));
    assert.equal(err.code, 'ENOTFOUND');
  });
  await t.test('dns.lookup example.com with options', async () => {
    const err = await new Promise((resolve) => dns.lookup('example.com', { all: true }, (e) => resolve(e)));
    assert.ok(isGuardError(err));
  });
  await t.test('dns.promises.lookup example.com', async () => {
    await assert.rejects(dns.promises.lookup('example.com'), isGuardError);
  });
  await t.test('dns.resolve4 example.com', async () => {
    const err = await new Promise((resolve) => dns.resolve4('example.com', (e) => resolve(e)));
    assert.ok(isGuardError(err));
  });
  await t.test('dns.promises.resolve example.com', async () => {
    await assert.rejects(dns.promises.resolve('example.com'), isGuardError);
  });
  await t.test('new dns.Resolver().resolve4 example.com', async () => {
    const err = await new Promise((resolve) => new dns.Resolver().resolve4('example.com', (e) => resolve(e)));
    assert.ok(isGuardError(err));
  });
  await t.test('dns.lookup localhost', async () => {
    const addrs = await dns.promises.lookup('localhost', { all: true });
    assert.ok(addrs.length > 0);
    for (const a of addrs) assert.match(a.address, /^(127\.0\.0\.1|::1)$/);
  });
});

test('UDP to other hosts is refused', async () => {
  const socket = dgram.createSocket('udp4');
  try {
    const err = await new Promise((resolve) => socket.send('x', 53, '10.0.0.1', (e) => resolve(e)));
    assert.ok(isGuardError(err));
  } finally {
    socket.close();
  }
});

test('loopback traffic still works', async (t) => {
  const server = http.createServer((req, res) => res.end('pong'));
  server.listen(0);
  await once(server, 'listening');
  const { port } = server.address();
  t.after(() => server.close());
  for (const host of ['127.0.0.1', 'localhost']) {
    await t.test(`fetch http://${host}`, async () => {
      const res = await fetch(`http://${host}:${port}/`);
      assert.equal(await res.text(), 'pong');
    });
    await t.test(`undici http://${host}`, async () => {
      const res = await undiciRequest(`http://${host}:${port}/`);
      assert.equal(await res.body.text(), 'pong');
    });
  }
  await t.test('net.connect 127.0.0.1', async () => {
    const socket = net.connect(port, '127.0.0.1');
    await once(socket, 'connect');
    socket.destroy();
  });
});
