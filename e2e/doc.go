// Package e2e holds cross-package end-to-end tests: the real packages of
// the module wired together over real connections, the way an application
// would wire them. It has no API of its own.
package e2e
