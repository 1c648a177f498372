package auth

import "fmt"

// ReadTargets exposes to the tests what the scope peek reads in body: for
// a message, one entry; for a batch, one per element. An entry is
// "method kind key", or "" for an element with no method.
func ReadTargets(body []byte) (entries []string, batch bool, err error) {
	one := func(raw []byte) error {
		entry := ""
		err := messageTarget(nil, raw, func(t target) { entry = fmt.Sprintf("%s %d %s", t.method, t.kind, t.key) })
		entries = append(entries, entry)
		return err
	}
	i := skipWS(body, 0)
	if i < len(body) && body[i] == '[' {
		eachElement(body, func(v []byte) {
			if e := one(v); e != nil && err == nil {
				err = e
			}
		})
		return entries, true, err
	}
	return entries, false, one(body)
}

// Target kinds, for the tests.
const (
	TargetNone     = int(targetNone)
	TargetTool     = int(targetTool)
	TargetPrompt   = int(targetPrompt)
	TargetResource = int(targetResource)
)
