package main

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/chromedp/chromedp"
)

// chromiumPath is where Debian's chromium lives (scripts/install-browser.sh
// installs it).
const chromiumPath = "/usr/bin/chromium"

// chromiumBrowse plays the user in a real headless Chromium: it opens the
// authorization URL, signs in with the name and password of
// browserLoginEnv on the login page, presses Allow on the consent page, and
// waits until the browser is back at the client's loopback redirect.
func chromiumBrowse(start string) error {
	if f, err := os.OpenFile(os.Getenv(browserLogEnv), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600); err == nil {
		fmt.Fprintln(f, start)
		f.Close()
	}
	u, err := url.Parse(start)
	if err != nil {
		return err
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chromiumPath), chromedp.NoSandbox, chromedp.Flag("disable-gpu", true))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	actx, acancel := chromedp.NewExecAllocator(ctx, opts...)
	defer acancel()
	bctx, bcancel := chromedp.NewContext(actx)
	defer bcancel()
	name, pw, _ := strings.Cut(os.Getenv(browserLoginEnv), ":")
	steps := []struct {
		name string
		a    chromedp.Action[chromedp.Void]
	}{
		{"open the authorization URL", chromedp.Navigate(start)},
		{"find the login form", chromedp.WaitVisible(chromedp.CSS("#username"))},
		{"type the user name", chromedp.SendKeys(chromedp.CSS("#username"), name)},
		{"type the password", chromedp.SendKeys(chromedp.CSS("#password"), pw)},
		{"press Sign in", chromedp.Click(chromedp.CSS("#login"))},
		{"find the consent page", chromedp.WaitVisible(chromedp.CSS("#allow"))},
		{"press Allow", chromedp.Click(chromedp.CSS("#allow"))},
	}
	// The first action on bctx starts the browser, which lives as long as
	// the context it ran with: start it on bctx itself.
	if err := chromedp.Do(bctx); err != nil {
		return fmt.Errorf("starting chromium: %w", err)
	}
	for _, st := range steps {
		sctx, scancel := context.WithTimeout(bctx, 10*time.Second)
		err := chromedp.Do(sctx, st.a)
		scancel()
		if err != nil {
			loc, _ := chromedp.Run(bctx, chromedp.Location())
			text, _ := chromedp.Run(bctx, chromedp.Text(chromedp.CSS("body")))
			return fmt.Errorf("chromium, at %q: %w (at %s: %q)", st.name, err, loc, oneLine(text))
		}
	}
	for {
		loc, err := chromedp.Run(bctx, chromedp.Location())
		if err != nil {
			return fmt.Errorf("chromium: %w", err)
		}
		if l, err := url.Parse(loc); err == nil && l.Host != u.Host && l.Host != "" {
			return nil // back at the client's loopback redirect
		}
		select {
		case <-ctx.Done():
			return errors.New("chromium never came back to the client")
		case <-time.After(50 * time.Millisecond):
		}
	}
}
