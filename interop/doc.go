// Package interop tests mcpstack against other implementations: the official Go SDK
// (github.com/modelcontextprotocol/go-sdk): each side's client against the
// other's server over stdio and over Streamable HTTP, in both answer modes,
// and the go-sdk's OAuth client against our resource server and
// authorization server, step-up included.
//
// It also runs third-party OAuth software from npm, pinned in
// node/package-lock.json and installed by scripts/interop-node.sh (with the
// Node runtime that runs it): node-oidc-provider as the authorization
// server of our authclient and our auth resource server (oidc_test.go,
// configured by node/oidc.mjs), and the TypeScript SDK's OAuth client
// against the mcpstack serve and authserver commands (ts_test.go, driving
// node/ts-client.mjs). TestClientsAgainstOurServerEras runs the clients of
// the go-sdk v1.8.0, the TypeScript SDK v2 (@modelcontextprotocol/client
// 2.4.0, driven by node/era-client.mjs, in versionNegotiation mode 'auto'
// and 'legacy') and the TypeScript SDK 1.32.2 against our server, which
// speaks revisions 2026-07-28 and 2025-11-25 on one endpoint, over
// Streamable HTTP and stdio, and checks on both sides which era each
// client ended up in. Those tests skip when the packages are missing,
// and fail instead when MCPSTACK_REQUIRE_NODE=1 (as scripts/test.sh sets).
//
// It is a module of its own so that the go-sdk, a test-only dependency,
// never reaches the go.sum of a module that uses mcpstack. It has no API;
// scripts/test.sh runs its tests.
package interop
