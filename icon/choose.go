package icon

import (
	"mime"
	"strings"

	"github.com/mcpstack/mcpstack/mcp"
)

// Want describes the icon a caller would like to show.
type Want struct {
	// Size is the wanted size in pixels, compared with the longer side of
	// each "WxH" entry. Zero or less means no preference, which favours
	// scalable icons and then the largest.
	Size int
	// Theme is "light", "dark" or "" for no preference.
	Theme string
	// Types, if not empty, lists the media types the caller can show
	// (image/jpg counts as image/jpeg). An icon that declares another type,
	// by its mimeType or its data: media type, is skipped; one that declares
	// none is kept.
	Types []string
}

// Choose returns the icon of icons that best suits want, and false when no
// icon is valid (see [Validate]) and of an accepted type.
//
// Icons are ranked first by theme: the wanted theme, then no theme, then
// the other theme (with no theme wanted: no theme, then any theme). Then by
// size, taking each icon's best sizes entry: exactly the wanted size, then
// "any" (scalable), then the smallest size above the wanted one, then icons
// without sizes (which suit any size but are of unknown quality), then the
// largest size below the wanted one. Remaining ties go to the icon listed
// first.
func Choose(icons []mcp.Icon, want Want) (mcp.Icon, bool) {
	best, bestRank := -1, rank{}
	for i, ic := range icons {
		if Validate(ic) != nil || !typeAccepted(ic, want.Types) {
			continue
		}
		r := rankIcon(ic, want)
		if best < 0 || r.less(bestRank) {
			best, bestRank = i, r
		}
	}
	if best < 0 {
		return mcp.Icon{}, false
	}
	return icons[best], true
}

type rank struct{ theme, class, key int }

func (r rank) less(o rank) bool {
	if r.theme != o.theme {
		return r.theme < o.theme
	}
	if r.class != o.class {
		return r.class < o.class
	}
	return r.key < o.key
}

// Size classes, best first.
const (
	classExact = iota
	classScalable
	classLarger
	classUnknown
	classSmaller
)

func rankIcon(ic mcp.Icon, want Want) rank {
	var r rank
	switch {
	case ic.Theme == want.Theme:
	case ic.Theme == "" || want.Theme == "":
		r.theme = 1
	default:
		r.theme = 2
	}
	if len(ic.Sizes) == 0 {
		r.class = classUnknown
		return r
	}
	first := true
	for _, s := range ic.Sizes {
		w, h, scalable, _ := ParseSize(s) // Validate passed
		c := rank{theme: r.theme}
		side := max(w, h)
		switch {
		case scalable:
			c.class = classScalable
		case want.Size <= 0:
			c.class, c.key = classLarger, -side
		case side == want.Size:
			c.class = classExact
		case side > want.Size:
			c.class, c.key = classLarger, side
		default:
			c.class, c.key = classSmaller, -side
		}
		if first || c.less(r) {
			r, first = c, false
		}
	}
	return r
}

// typeAccepted reports whether the type ic declares is among types.
func typeAccepted(ic mcp.Icon, types []string) bool {
	if len(types) == 0 {
		return true
	}
	decl := ic.MIMEType
	if decl == "" && len(ic.Src) >= 5 && strings.EqualFold(ic.Src[:5], "data:") {
		d, _ := parseDataURI(ic.Src) // Validate passed
		decl = d.mediaType
	}
	if decl == "" {
		return true
	}
	decl = canonicalType(decl)
	for _, t := range types {
		if canonicalType(t) == decl {
			return true
		}
	}
	return false
}

// canonicalType lowercases a media type, drops its parameters and maps
// image/jpg to image/jpeg.
func canonicalType(t string) string {
	mt, _, err := mime.ParseMediaType(t)
	if err != nil {
		return strings.ToLower(strings.TrimSpace(t))
	}
	if mt == "image/jpg" || mt == "image/pjpeg" {
		return TypeJPEG
	}
	return mt
}
