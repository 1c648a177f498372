// Package icon handles the icons that MCP servers attach to their
// implementation, tools, prompts and resources (the "icons" property of the
// 2025-11-25 revision) on behalf of the client that shows them.
//
// Icons are untrusted input. The package offers three things:
//
//   - [Validate] checks an icon's metadata: the src scheme (https or data
//     only), the sizes entries ("WxH" or "any") and the theme.
//   - [Choose] picks the most suitable icon of a list for a wanted pixel
//     size and theme.
//   - [Fetcher] retrieves an icon's bytes under the protocol's security
//     rules: https or data: only, same origin as the server, no cookies,
//     Authorization header or client certificates, bounded redirects that
//     keep scheme and origin, limits on body size, pixel dimensions and
//     animation frames checked from the image headers before anything is
//     decoded, type detection from magic bytes against a strict allowlist,
//     and SVG refused unless sanitized.
//
// Every refusal is an [*Error] whose [Reason] says why; a Reason is itself an
// error, so errors.Is(err, icon.ReasonOrigin) reports whether err is a
// refusal for that reason.
//
// The package never decodes pixels: a fetched [Image] holds the verified
// bytes, whose header-declared dimensions are within the configured bounds,
// so that the caller can decode them at a bounded cost.
package icon
