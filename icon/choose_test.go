package icon

import (
	"testing"

	"github.com/mcpstack/mcpstack/mcp"
)

func TestChoose(t *testing.T) {
	ic := func(name string, theme string, sizes ...string) mcp.Icon {
		return mcp.Icon{Src: "https://example.com/" + name, Theme: theme, Sizes: sizes}
	}
	tests := []struct {
		name  string
		icons []mcp.Icon
		want  Want
		pick  string // "" for none
	}{
		{"empty list", nil, Want{Size: 32}, ""},
		{"only invalid", []mcp.Icon{{Src: "javascript:x"}, ic("bad", "blue")}, Want{}, ""},
		{"invalid skipped", []mcp.Icon{{Src: "file:///a", Sizes: []string{"32x32"}}, ic("b", "", "16x16")}, Want{Size: 32}, "b"},
		{"exact size", []mcp.Icon{ic("16", "", "16x16"), ic("32", "", "32x32"), ic("64", "", "64x64")}, Want{Size: 32}, "32"},
		{"smallest above", []mcp.Icon{ic("128", "", "128x128"), ic("64", "", "64x64"), ic("16", "", "16x16")}, Want{Size: 32}, "64"},
		{"largest below when none above", []mcp.Icon{ic("8", "", "8x8"), ic("24", "", "24x24"), ic("16", "", "16x16")}, Want{Size: 32}, "24"},
		{"any beats larger", []mcp.Icon{ic("64", "", "64x64"), ic("svg", "", "any")}, Want{Size: 32}, "svg"},
		{"exact beats any", []mcp.Icon{ic("svg", "", "any"), ic("32", "", "32x32")}, Want{Size: 32}, "32"},
		{"any beats smaller", []mcp.Icon{ic("16", "", "16x16"), ic("svg", "", "any")}, Want{Size: 32}, "svg"},
		{"no sizes between larger and smaller", []mcp.Icon{ic("16", "", "16x16"), ic("nosize", "")}, Want{Size: 32}, "nosize"},
		{"larger beats no sizes", []mcp.Icon{ic("nosize", ""), ic("48", "", "48x48")}, Want{Size: 32}, "48"},
		{"best entry of several", []mcp.Icon{ic("multi", "", "16x16", "32x32"), ic("48", "", "48x48")}, Want{Size: 32}, "multi"},
		{"longer side counts", []mcp.Icon{ic("wide", "", "64x32"), ic("sq", "", "40x40")}, Want{Size: 32}, "sq"},
		{"no size wanted: any first", []mcp.Icon{ic("512", "", "512x512"), ic("svg", "", "any")}, Want{}, "svg"},
		{"no size wanted: largest", []mcp.Icon{ic("16", "", "16x16"), ic("512", "", "512x512"), ic("64", "", "64x64")}, Want{}, "512"},
		{"exact theme first", []mcp.Icon{ic("light", "light", "32x32"), ic("none", "", "32x32"), ic("dark", "dark", "32x32")}, Want{Size: 32, Theme: "dark"}, "dark"},
		{"no theme before other theme", []mcp.Icon{ic("light", "light", "32x32"), ic("none", "", "32x32")}, Want{Size: 32, Theme: "dark"}, "none"},
		{"other theme as last resort", []mcp.Icon{ic("light", "light", "32x32")}, Want{Size: 32, Theme: "dark"}, "light"},
		{"theme beats size", []mcp.Icon{ic("light32", "light", "32x32"), ic("dark8", "dark", "8x8")}, Want{Size: 32, Theme: "dark"}, "dark8"},
		{"no theme wanted prefers unthemed", []mcp.Icon{ic("dark", "dark", "32x32"), ic("none", "", "32x32")}, Want{Size: 32}, "none"},
		{"tie goes to first", []mcp.Icon{ic("a", "", "32x32"), ic("b", "", "32x32")}, Want{Size: 32}, "a"},
		{"tie goes to first, reversed", []mcp.Icon{ic("b", "", "32x32"), ic("a", "", "32x32")}, Want{Size: 32}, "b"},
		{"types filter declared", []mcp.Icon{{Src: "https://example.com/svg", MIMEType: "image/svg+xml", Sizes: []string{"any"}}, ic("png", "", "16x16")}, Want{Size: 32, Types: []string{"image/png"}}, "png"},
		{"types filter data media type", []mcp.Icon{{Src: "data:image/svg+xml;base64,eA==", Sizes: []string{"any"}}, ic("png", "", "16x16")}, Want{Size: 32, Types: []string{"image/png"}}, "png"},
		{"types keep undeclared", []mcp.Icon{ic("undeclared", "", "32x32")}, Want{Size: 32, Types: []string{"image/png"}}, "undeclared"},
		{"types jpg alias", []mcp.Icon{{Src: "https://example.com/jpg", MIMEType: "image/jpg"}}, Want{Types: []string{"image/jpeg"}}, "jpg"},
		{"types none accepted", []mcp.Icon{{Src: "https://example.com/gif", MIMEType: "image/gif"}}, Want{Types: []string{"image/png"}}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := Choose(tt.icons, tt.want)
			if tt.pick == "" {
				if ok {
					t.Fatalf("Choose = %v, true; want none", got)
				}
				return
			}
			if !ok || got.Src != "https://example.com/"+tt.pick {
				t.Fatalf("Choose = %q, %v; want %q", got.Src, ok, tt.pick)
			}
		})
	}
}

func BenchmarkChoose(b *testing.B) {
	var icons []mcp.Icon
	for _, s := range []string{"16x16", "32x32", "48x48", "64x64", "128x128", "256x256"} {
		for _, th := range []string{"", "light", "dark"} {
			icons = append(icons, mcp.Icon{Src: "https://example.com/" + s + th, Sizes: []string{s}, Theme: th})
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := Choose(icons, Want{Size: 40, Theme: "dark"}); !ok {
			b.Fatal("no icon")
		}
	}
}
