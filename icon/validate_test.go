package icon

import (
	"errors"
	"testing"

	"github.com/mcpstack/mcpstack/mcp"
)

func TestValidate(t *testing.T) {
	png := toDataURI("image/png", []byte("x"))
	tests := []struct {
		name   string
		icon   mcp.Icon
		reason Reason // "" for valid
		field  string
	}{
		{"https", mcp.Icon{Src: "https://example.com/i.png"}, "", ""},
		{"https upper-case scheme", mcp.Icon{Src: "HTTPS://example.com/i.png"}, "", ""},
		{"data", mcp.Icon{Src: png}, "", ""},
		{"data upper-case", mcp.Icon{Src: "DATA:image/png;BASE64,eA=="}, "", ""},
		{"data no media type", mcp.Icon{Src: "data:;base64,eA=="}, "", ""},
		{"data with charset", mcp.Icon{Src: "data:image/svg+xml;charset=utf-8;base64,eA=="}, "", ""},
		{"all fields", mcp.Icon{Src: png, MIMEType: "image/png", Sizes: []string{"48x48", "96x64", "any"}, Theme: "dark"}, "", ""},
		{"light", mcp.Icon{Src: png, Theme: "light"}, "", ""},
		{"http", mcp.Icon{Src: "http://example.com/i.png"}, ReasonScheme, "src"},
		{"javascript", mcp.Icon{Src: "javascript:alert(1)"}, ReasonScheme, "src"},
		{"JavaScript mixed case", mcp.Icon{Src: "JaVaScRiPt:alert(1)"}, ReasonScheme, "src"},
		{"file", mcp.Icon{Src: "file:///etc/passwd"}, ReasonScheme, "src"},
		{"ftp", mcp.Icon{Src: "ftp://example.com/i.png"}, ReasonScheme, "src"},
		{"ws", mcp.Icon{Src: "ws://example.com/i.png"}, ReasonScheme, "src"},
		{"wss", mcp.Icon{Src: "wss://example.com/i.png"}, ReasonScheme, "src"},
		{"app scheme", mcp.Icon{Src: "vscode://file/x"}, ReasonScheme, "src"},
		{"blob", mcp.Icon{Src: "blob:https://example.com/x"}, ReasonScheme, "src"},
		{"no scheme", mcp.Icon{Src: "/icon.png"}, ReasonScheme, "src"},
		{"empty", mcp.Icon{}, ReasonScheme, "src"},
		{"https without host", mcp.Icon{Src: "https:/icon.png"}, ReasonURL, "src"},
		{"https opaque", mcp.Icon{Src: "https:icon.png"}, ReasonURL, "src"},
		{"https with credentials", mcp.Icon{Src: "https://u:p@example.com/i.png"}, ReasonURL, "src"},
		{"https bad escape", mcp.Icon{Src: "https://example.com/%zz"}, ReasonURL, "src"},
		{"data not base64", mcp.Icon{Src: "data:image/png,abc"}, ReasonURL, "src"},
		{"data no comma", mcp.Icon{Src: "data:image/png;base64"}, ReasonURL, "src"},
		{"data bad media type", mcp.Icon{Src: "data:image/;base64,eA=="}, ReasonURL, "src"},
		{"bad mimeType", mcp.Icon{Src: png, MIMEType: "image/"}, ReasonInvalid, "mimeType"},
		{"theme", mcp.Icon{Src: png, Theme: "Dark"}, ReasonInvalid, "theme"},
		{"theme other", mcp.Icon{Src: png, Theme: "blue"}, ReasonInvalid, "theme"},
		{"size bad", mcp.Icon{Src: png, Sizes: []string{"48"}}, ReasonInvalid, "sizes"},
		{"one bad size among good", mcp.Icon{Src: png, Sizes: []string{"48x48", "0x48"}}, ReasonInvalid, "sizes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Validate(tt.icon)
			if tt.reason == "" {
				if err != nil {
					t.Fatalf("Validate = %v, want nil", err)
				}
				return
			}
			e := wantReason(t, err, tt.reason)
			if e.Field != tt.field {
				t.Errorf("Field = %q, want %q", e.Field, tt.field)
			}
		})
	}
}

func TestParseSize(t *testing.T) {
	tests := []struct {
		in       string
		w, h     int
		scalable bool
		ok       bool
	}{
		{"48x48", 48, 48, false, true},
		{"16x32", 16, 32, false, true},
		{"1x1", 1, 1, false, true},
		{"999999999x1", 999999999, 1, false, true},
		{"any", 0, 0, true, true},
		{"ANY", 0, 0, false, false},
		{"48X48", 0, 0, false, false},
		{"048x48", 0, 0, false, false},
		{"0x48", 0, 0, false, false},
		{"48x0", 0, 0, false, false},
		{"+48x48", 0, 0, false, false},
		{"-48x48", 0, 0, false, false},
		{"48x-48", 0, 0, false, false},
		{"48 x48", 0, 0, false, false},
		{"48x48 ", 0, 0, false, false},
		{"48x48x48", 0, 0, false, false},
		{"x48", 0, 0, false, false},
		{"48x", 0, 0, false, false},
		{"1.5x2", 0, 0, false, false},
		{"1000000000x1", 0, 0, false, false},
		{"", 0, 0, false, false},
		{"48×48", 0, 0, false, false},
	}
	for _, tt := range tests {
		w, h, scalable, err := ParseSize(tt.in)
		if (err == nil) != tt.ok {
			t.Errorf("ParseSize(%q) err = %v, want ok %v", tt.in, err, tt.ok)
			continue
		}
		if err != nil {
			if !errors.Is(err, ReasonInvalid) {
				t.Errorf("ParseSize(%q) err = %v, want ReasonInvalid", tt.in, err)
			}
			continue
		}
		if w != tt.w || h != tt.h || scalable != tt.scalable {
			t.Errorf("ParseSize(%q) = %d, %d, %v; want %d, %d, %v", tt.in, w, h, scalable, tt.w, tt.h, tt.scalable)
		}
	}
}

func TestOrigin(t *testing.T) {
	tests := []struct{ in, want string }{
		{"https://example.com/mcp", "https://example.com"},
		{"https://EXAMPLE.com:443/", "https://example.com"},
		{"HTTPS://example.com:8443/x?y#z", "https://example.com:8443"},
		{"http://example.com:80", "http://example.com"},
		{"http://example.com:443", "http://example.com:443"},
		{"https://example.com:80", "https://example.com:80"},
		{"https://[::1]:443/", "https://[::1]"},
		{"https://[::1]:8443/", "https://[::1]:8443"},
		{"https://127.0.0.1:1234", "https://127.0.0.1:1234"},
		{"https://user:pw@example.com/", "https://example.com"},
	}
	for _, tt := range tests {
		got, err := Origin(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("Origin(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
	for _, bad := range []string{"", "/path", "example.com", "https://", "%zz"} {
		if got, err := Origin(bad); err == nil {
			t.Errorf("Origin(%q) = %q, want error", bad, got)
		}
	}
}

func TestErrorMessage(t *testing.T) {
	err := Validate(mcp.Icon{Src: "ftp://x/y"})
	want := `icon: unsafe scheme (src): scheme "ftp" is not https or data`
	if err == nil || err.Error() != want {
		t.Errorf("err = %v, want %s", err, want)
	}
	if errors.Is(err, ReasonOrigin) {
		t.Error("errors.Is matched another reason")
	}
	if got := ReasonFrames.Error(); got != "icon: too many frames" {
		t.Errorf("ReasonFrames.Error() = %q", got)
	}
}
