package mcp

// Icon is an image that a client may show for an Implementation, Tool,
// Prompt, Resource, ResourceTemplate or ResourceLink.
//
// Icons are untrusted input: fetch them with package icon, which applies the
// protocol's security rules, never with a general-purpose HTTP client.
type Icon struct {
	// Src is an https URL of the image or a data: URI with base64 data.
	Src string `json:"src"`
	// MIMEType overrides the type that the server would report, if set.
	MIMEType string `json:"mimeType,omitempty"`
	// Sizes lists the sizes the image is suited to, as "WxH" entries or
	// "any" for scalable formats. Empty means any size.
	Sizes []string `json:"sizes,omitempty"`
	// Theme is "light" or "dark": the background the icon is designed for.
	// Empty means any theme.
	Theme string `json:"theme,omitempty"`
}
