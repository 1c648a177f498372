package icon

import (
	"context"
	"errors"
	"testing"

	"github.com/mcpstack/mcpstack/mcp"
)

// The seed corpus is in testdata/fuzz; these add a few more by hand.

func FuzzSanitizeSVG(f *testing.F) {
	f.Add([]byte(evilSVG))
	f.Add([]byte(`<svg><style>rect{fill:url(#a)}</style><use href="#a"/></svg>`))
	f.Fuzz(func(t *testing.T, data []byte) {
		out, err := SanitizeSVG(data)
		if err != nil {
			if !errors.Is(err, ReasonSVG) {
				t.Fatalf("error without ReasonSVG: %v", err)
			}
			return
		}
		checkSafeSVG(t, out)
	})
}

func FuzzSniff(f *testing.F) {
	f.Add(testPNG(f, 3, 2))
	f.Add(testJPEG(f, 3, 2))
	f.Add(apng(3))
	f.Add(webpAnimated(5, 5, 2))
	f.Add(webpLossy(5, 5))
	f.Fuzz(func(t *testing.T, data []byte) {
		info, err := Sniff(data)
		if err != nil {
			if !errors.Is(err, ReasonType) {
				t.Fatalf("error without ReasonType: %v", err)
			}
			return
		}
		switch info.MIMEType {
		case TypePNG, TypeJPEG, TypeWebP:
			if info.Width <= 0 || info.Height <= 0 {
				t.Fatalf("raster %+v without dimensions", info)
			}
		case TypeSVG:
			if info.Width < 0 || info.Height < 0 {
				t.Fatalf("negative dimensions %+v", info)
			}
		default:
			t.Fatalf("unknown type %+v", info)
		}
		if info.Frames < 1 {
			t.Fatalf("frames %+v", info)
		}
	})
}

// FuzzFetchData runs the whole pipeline over data: URIs: parsing, size
// check, base64, sniffing, limits and sanitizing.
func FuzzFetchData(f *testing.F) {
	f.Add(toDataURI("image/png", testPNG(f, 2, 2)))
	f.Add(toDataURI("image/svg+xml", []byte(evilSVG)))
	f.Add("data:;base64,AAAA")
	fetcher, err := NewFetcher(Options{AllowSVG: true, AllowWebP: true, MaxFrames: 4, MaxBytes: 64 << 10})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, src string) {
		img, err := fetcher.Fetch(context.Background(), mcp.Icon{Src: src}, "")
		if err != nil {
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("untyped error %v", err)
			}
			return
		}
		if img.Width > DefaultMaxWidth || img.Height > DefaultMaxHeight || img.Frames > 4 || len(img.Data) > 64<<10 {
			t.Fatalf("limits not applied: %s %dx%d %d frames %d bytes", img.MIMEType, img.Width, img.Height, img.Frames, len(img.Data))
		}
		if img.MIMEType == TypeSVG {
			checkSafeSVG(t, img.Data)
		}
	})
}
