package authclient

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
)

// FuzzLoopbackCallback: whatever query reaches the redirect listener, it
// is taken only if it carries exactly one state, equal to the one of the
// authorization in progress; anything else is answered 400 and the wait
// goes on (#16.4).
func FuzzLoopbackCallback(f *testing.F) {
	const state = "s3cr3t-state"
	for _, q := range []string{"code=x&state=" + state, "state=" + state + "&state=" + state, "error=access_denied", "state=s3cr3t", "state=%73" + state[1:], ";state=" + state, "code=x&state=" + state + "%00"} {
		f.Add(q)
	}
	f.Fuzz(func(t *testing.T, rawQuery string) {
		a := &LoopbackAuthorizer{}
		p := &pending{state: state, ch: make(chan url.Values, 1)}
		a.waiting = p
		r := httptest.NewRequest(http.MethodGet, "/callback", nil)
		r.URL.RawQuery = rawQuery
		w := httptest.NewRecorder()
		a.callback(w, r)
		q, _ := url.ParseQuery(rawQuery)
		want := len(q["state"]) == 1 && q["state"][0] == state
		select {
		case got := <-p.ch:
			if !want || w.Code != http.StatusOK || got.Get("state") != state {
				t.Fatalf("query %q taken (status %d)", rawQuery, w.Code)
			}
		default:
			if want {
				t.Fatalf("query %q with the right state refused (status %d)", rawQuery, w.Code)
			}
			if w.Code != http.StatusBadRequest || a.waiting != p {
				t.Fatalf("query %q: status %d, still waiting: %v", rawQuery, w.Code, a.waiting == p)
			}
		}
	})
}
