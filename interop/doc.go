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
// node/ts-client.mjs). Those tests skip when the packages are missing,
// and fail instead when MCPSTACK_REQUIRE_NODE=1 (as scripts/test.sh sets).
//
// It is a module of its own so that the go-sdk, a test-only dependency,
// never reaches the go.sum of a module that uses mcpstack. It has no API;
// scripts/test.sh runs its tests.
package interop
