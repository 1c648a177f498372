package oauth

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

// FuzzParseChallenges checks that the parser never panics, reports errors
// as ErrMalformedChallenge, lower-cases parameter names, and that writing a
// parsed Bearer challenge and parsing it again gives the same values. A
// newline in the input separates header lines.
func FuzzParseChallenges(f *testing.F) {
	for _, s := range []string{
		`Bearer resource_metadata="https://a/.well-known/oauth-protected-resource", scope="x y"`,
		`Basic realm="a", Bearer error="insufficient_scope", scope="files:write", error_description="need \"write\""`,
		"Negotiate abc==, Bearer\nDPoP algs=\"ES256 PS256\"",
		`Bearer realm=x,, ,error=invalid_token`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		headers := strings.Split(in, "\n")
		cs, err := ParseChallenges(headers)
		if err != nil {
			if !errors.Is(err, ErrMalformedChallenge) {
				t.Fatalf("error %v does not wrap ErrMalformedChallenge", err)
			}
			return
		}
		for _, c := range cs {
			if c.Scheme == "" {
				t.Fatalf("empty scheme in %#v", c)
			}
			if c.Token68 != "" && c.Params != nil {
				t.Fatalf("challenge has both token68 and params: %#v", c)
			}
			for k := range c.Params {
				if k != strings.ToLower(k) {
					t.Fatalf("parameter name %q not lower-cased", k)
				}
			}
			b, ok := c.AsBearer()
			if !ok {
				continue
			}
			h := b.String()
			again, ok := ParseBearerChallenge([]string{h})
			if !ok {
				t.Fatalf("String() = %q does not parse", h)
			}
			if !reflect.DeepEqual(again, b) {
				t.Fatalf("round trip through %q:\n got %#v\nwant %#v", h, again, b)
			}
		}
	})
}
