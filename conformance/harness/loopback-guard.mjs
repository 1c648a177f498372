// loopback-guard.mjs keeps a Node process on this machine.
//
// Load it before anything else with `node --import /abs/path/loopback-guard.mjs`
// (or NODE_OPTIONS="--import=/abs/path/loopback-guard.mjs", which also reaches
// Node child processes). It does two things:
//
//  1. Every TCP listener binds 127.0.0.1. A listen() with no host, with a
//     wildcard host (0.0.0.0, ::) or with any non-loopback host is rewritten to
//     127.0.0.1. Listeners on 127.0.0.1, ::1 or localhost, on a Unix socket
//     path, or on an inherited handle are left as they are.
//  2. Every outgoing TCP/TLS connection, UDP datagram and DNS query must name
//     127.0.0.1, ::1 or localhost. Anything else fails at once, before any
//     DNS lookup, with an error whose code is ECONNREFUSED and whose message
//     starts with "loopback-guard:".
//
// The conformance suite starts mock servers that listen on all interfaces and
// one of its scenarios fetches an https URL on a made-up host; with this guard
// neither can reach or be reached from any other machine.

import dgram from 'node:dgram';
import dns from 'node:dns';
import { syncBuiltinESMExports } from 'node:module';
import net from 'node:net';
import tls from 'node:tls';

const marker = Symbol.for('mcpstack.loopbackGuard');

if (!globalThis[marker]) {
  globalThis[marker] = { refused: [] };
  install(globalThis[marker]);
}

// isLoopbackHost reports whether host names this machine's loopback interface
// in one of the three allowed spellings. An empty or missing host means
// "localhost" to Node's connect functions, so it is allowed too.
function isLoopbackHost(host) {
  if (host === undefined || host === null || host === '') return true;
  if (typeof host !== 'string') return false;
  let h = host.toLowerCase();
  if (h.startsWith('[') && h.endsWith(']')) h = h.slice(1, -1);
  return h === '127.0.0.1' || h === '::1' || h === 'localhost';
}

function refusal(state, what, host, port) {
  const where = port === undefined ? String(host) : `${host}:${port}`;
  const err = new Error(
    `loopback-guard: ${what} ${where} refused: only 127.0.0.1, ::1 and localhost are allowed`,
  );
  err.code = 'ECONNREFUSED';
  err.syscall = what;
  err.hostname = String(host);
  err.loopbackGuard = true;
  state.refused.push(where);
  if (process.env.LOOPBACK_GUARD_QUIET !== '1') {
    process.stderr.write(`${err.message}\n`);
  }
  return err;
}

// connectTarget extracts {host, port, path} from the many call shapes of
// net.connect / socket.connect / tls.connect.
function connectTarget(args) {
  let a0 = args[0];
  if (Array.isArray(a0)) a0 = a0[0]; // internal normalized form
  if (a0 !== null && typeof a0 === 'object') {
    return { host: a0.host, port: a0.port, path: a0.path, socket: a0.socket };
  }
  if (typeof a0 === 'string' && !/^\d+$/.test(a0)) return { path: a0 };
  const host = typeof args[1] === 'string' ? args[1] : undefined;
  return { host, port: a0 };
}

function guardedTarget(args) {
  const t = connectTarget(args);
  if (t.path !== undefined && t.path !== null) return null; // Unix socket
  if (t.socket) return null; // wrapping a socket that was itself checked
  return isLoopbackHost(t.host) ? null : t;
}

function isWildcardOrForeign(host) {
  return !isLoopbackHost(host) || host === undefined || host === null || host === '';
}

function install(state) {
  // 1. Listeners. A listen() without a host binds at once, so callers may
  // read server.address() right after it; a listen() with a host first looks
  // the host up, which is asynchronous even for an IP literal. So that a
  // rewritten listen still binds at once, the lookup Node makes inside
  // listen() for the 127.0.0.1 we put there is answered synchronously.
  const origListen = net.Server.prototype.listen;
  const listenLoopback = (server, args) => {
    const savedLookup = dns.lookup;
    dns.lookup = function loopbackLookup(hostname, ...rest) {
      const cb = rest[rest.length - 1];
      if (hostname === '127.0.0.1' && typeof cb === 'function') {
        const opts = typeof rest[0] === 'object' && rest[0] !== null ? rest[0] : {};
        if (opts.all) return cb(null, [{ address: '127.0.0.1', family: 4 }]);
        return cb(null, '127.0.0.1', 4);
      }
      return savedLookup.call(this, hostname, ...rest);
    };
    try {
      return origListen.apply(server, args);
    } finally {
      dns.lookup = savedLookup;
    }
  };
  net.Server.prototype.listen = function listen(...args) {
    const a0 = args[0];
    if (a0 === undefined || typeof a0 === 'function') {
      // listen() / listen(cb): random port on all interfaces.
      return listenLoopback(this, [0, '127.0.0.1', ...args]);
    }
    if (a0 !== null && typeof a0 === 'object') {
      if (a0._handle || a0.fd !== undefined || a0.handle || a0.path !== undefined) {
        return origListen.apply(this, args);
      }
      if (isWildcardOrForeign(a0.host)) {
        args[0] = { ...a0, host: '127.0.0.1', ipv6Only: false };
        return listenLoopback(this, args);
      }
      return origListen.apply(this, args);
    }
    const isPort = typeof a0 === 'number' || (typeof a0 === 'string' && /^\d+$/.test(a0));
    if (!isPort) return origListen.apply(this, args); // pipe name
    if (typeof args[1] === 'string') {
      if (!isWildcardOrForeign(args[1])) return origListen.apply(this, args);
      args[1] = '127.0.0.1';
    } else {
      args.splice(1, 0, '127.0.0.1');
    }
    return listenLoopback(this, args);
  };

  // 2. Outgoing TCP and TLS.
  const failLater = (socket, err) => {
    process.nextTick(() => socket.destroy(err));
    return socket;
  };

  const origSocketConnect = net.Socket.prototype.connect;
  net.Socket.prototype.connect = function connect(...args) {
    const bad = guardedTarget(args);
    if (bad) return failLater(this, refusal(state, 'connect', bad.host, bad.port));
    return origSocketConnect.apply(this, args);
  };

  for (const name of ['connect', 'createConnection']) {
    const orig = net[name];
    net[name] = function guardedNetConnect(...args) {
      const bad = guardedTarget(args);
      if (bad) return failLater(new net.Socket(), refusal(state, 'connect', bad.host, bad.port));
      return orig.apply(this, args);
    };
  }

  const origTLSConnect = tls.connect;
  tls.connect = function guardedTLSConnect(...args) {
    const bad = guardedTarget(args);
    if (bad) return failLater(new tls.TLSSocket(null), refusal(state, 'connect', bad.host, bad.port));
    return origTLSConnect.apply(this, args);
  };

  // 3. UDP.
  const origSend = dgram.Socket.prototype.send;
  dgram.Socket.prototype.send = function send(...args) {
    for (let i = 1; i < args.length; i++) {
      if (typeof args[i] === 'string' && !/^\d+$/.test(args[i]) && !isLoopbackHost(args[i])) {
        const err = refusal(state, 'send', args[i]);
        const cb = args.find((a) => typeof a === 'function');
        if (cb) process.nextTick(cb, err);
        else process.nextTick(() => this.emit('error', err));
        return;
      }
    }
    return origSend.apply(this, args);
  };
  const origUDPConnect = dgram.Socket.prototype.connect;
  dgram.Socket.prototype.connect = function connect(port, address, cb) {
    if (typeof address === 'string' && !isLoopbackHost(address)) {
      const err = refusal(state, 'connect', address, port);
      if (typeof cb === 'function') process.nextTick(cb, err);
      else process.nextTick(() => this.emit('error', err));
      return;
    }
    return origUDPConnect.apply(this, arguments);
  };

  // 4. DNS. lookup answers loopback names from the system (that is
  // /etc/hosts, never the network); every resolver query fails.
  const origLookup = dns.lookup;
  dns.lookup = function lookup(hostname, options, callback) {
    const cb = typeof options === 'function' ? options : callback;
    if (!isLoopbackHost(hostname)) {
      const err = refusal(state, 'getaddrinfo', hostname);
      err.code = 'ENOTFOUND';
      process.nextTick(cb, err);
      return {};
    }
    return origLookup.apply(this, arguments);
  };
  const origPromiseLookup = dns.promises.lookup;
  dns.promises.lookup = async function lookup(hostname, options) {
    if (!isLoopbackHost(hostname)) {
      const err = refusal(state, 'getaddrinfo', hostname);
      err.code = 'ENOTFOUND';
      throw err;
    }
    return origPromiseLookup.call(this, hostname, options);
  };
  const queryNames = (obj) =>
    Object.getOwnPropertyNames(obj).filter(
      (n) => (n.startsWith('resolve') || n === 'reverse' || n === 'lookupService') && typeof obj[n] === 'function',
    );
  for (const name of queryNames(dns)) {
    dns[name] = function refusedQuery(host, ...rest) {
      const cb = rest.reverse().find((a) => typeof a === 'function');
      const err = refusal(state, 'query', host);
      if (cb) process.nextTick(cb, err);
    };
  }
  for (const name of queryNames(dns.promises)) {
    dns.promises[name] = async function refusedQuery(host) {
      throw refusal(state, 'query', host);
    };
  }
  for (const proto of [dns.Resolver.prototype, dns.promises.Resolver.prototype]) {
    for (const name of queryNames(proto)) {
      const isPromise = proto === dns.promises.Resolver.prototype;
      proto[name] = isPromise
        ? async function refusedQuery(host) {
            throw refusal(state, 'query', host);
          }
        : function refusedQuery(host, ...rest) {
            const cb = rest.reverse().find((a) => typeof a === 'function');
            const err = refusal(state, 'query', host);
            if (cb) process.nextTick(cb, err);
          };
    }
  }

  // Named ESM imports of builtins (import { connect } from 'node:net') are
  // copies; bring them in line with the patched objects.
  syncBuiltinESMExports();
}
