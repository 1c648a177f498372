// Package interop tests mcpstack against the official Go SDK
// (github.com/modelcontextprotocol/go-sdk): each side's client against the
// other's server over stdio and over Streamable HTTP, in both answer modes,
// and the go-sdk's OAuth client against our resource server and
// authorization server, step-up included.
//
// It is a module of its own so that the go-sdk, a test-only dependency,
// never reaches the go.sum of a module that uses mcpstack. It has no API;
// scripts/test.sh runs its tests.
package interop
