package icon_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"image"
	"image/png"

	"github.com/mcpstack/mcpstack/icon"
	"github.com/mcpstack/mcpstack/mcp"
)

func ExampleValidate() {
	for _, ic := range []mcp.Icon{
		{Src: "https://example.com/icon.png", Sizes: []string{"48x48"}},
		{Src: "javascript:alert(1)"},
		{Src: "https://example.com/icon.png", Sizes: []string{"048x48"}},
		{Src: "https://example.com/icon.png", Theme: "sepia"},
	} {
		err := icon.Validate(ic)
		var e *icon.Error
		if errors.As(err, &e) {
			fmt.Printf("%s: %s\n", e.Field, string(e.Reason))
			continue
		}
		fmt.Println("ok")
	}
	// Output:
	// ok
	// src: unsafe scheme
	// sizes: invalid metadata
	// theme: invalid metadata
}

func ExampleChoose() {
	icons := []mcp.Icon{
		{Src: "https://example.com/16.png", Sizes: []string{"16x16"}},
		{Src: "https://example.com/64.png", Sizes: []string{"64x64"}},
		{Src: "https://example.com/128-dark.png", Sizes: []string{"128x128"}, Theme: "dark"},
		{Src: "https://example.com/logo.svg", MIMEType: "image/svg+xml", Sizes: []string{"any"}},
	}
	best, _ := icon.Choose(icons, icon.Want{Size: 32})
	fmt.Println(best.Src)
	best, _ = icon.Choose(icons, icon.Want{Size: 32, Types: []string{"image/png"}})
	fmt.Println(best.Src)
	best, _ = icon.Choose(icons, icon.Want{Size: 32, Theme: "dark"})
	fmt.Println(best.Src)
	// Output:
	// https://example.com/logo.svg
	// https://example.com/64.png
	// https://example.com/128-dark.png
}

func ExampleFetcher_Fetch() {
	var buf bytes.Buffer
	if err := png.Encode(&buf, image.NewGray(image.Rect(0, 0, 16, 16))); err != nil {
		panic(err)
	}
	src := "data:image/png;base64," + base64.StdEncoding.EncodeToString(buf.Bytes())

	f, err := icon.NewFetcher(icon.Options{})
	if err != nil {
		panic(err)
	}
	// The server was reached over stdio: it has no origin, so only data:
	// icons (and configured origins) are allowed.
	img, err := f.Fetch(context.Background(), mcp.Icon{Src: src}, "")
	if err != nil {
		panic(err)
	}
	fmt.Println(img.MIMEType, img.Width, img.Height)

	_, err = f.Fetch(context.Background(), mcp.Icon{Src: src, MIMEType: "image/jpeg"}, "")
	fmt.Println(errors.Is(err, icon.ReasonTypeMismatch))
	_, err = f.Fetch(context.Background(), mcp.Icon{Src: "https://cdn.example/icon.png"}, "")
	fmt.Println(err)
	// Output:
	// image/png 16 16
	// true
	// icon: origin not allowed (src): https://cdn.example: the server has no origin and the origin is not allowed
}

func ExampleSanitizeSVG() {
	out, err := icon.SanitizeSVG([]byte(`<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)">` +
		`<script>alert(2)</script><a href="https://evil.example/"><rect width="4" height="4"/></a></svg>`))
	if err != nil {
		panic(err)
	}
	fmt.Println(string(out))
	// Output:
	// <svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink"><a><rect width="4" height="4"></rect></a></svg>
}
