package buildinfo

import (
	"runtime/debug"
	"strings"
)

// Build is what the Go toolchain recorded about the running binary.
type Build struct {
	// Version is the main module's version: a tag (v1.2.3), a
	// pseudo-version made from the commit (v0.0.0-20260101120000-abcdef123456,
	// "+dirty" when the tree had changes) or "(devel)".
	Version string
	// Revision is the VCS commit the binary was built from ("" when it was
	// built outside a checkout), Time its commit time, Modified whether the
	// tree had uncommitted changes.
	Revision string
	Time     string
	Modified bool
	// GoVersion is the toolchain that built it.
	GoVersion string
}

// Read returns the running binary's build information.
func Read() Build {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return Build{Version: "(unknown)"}
	}
	return buildOf(bi)
}

func buildOf(bi *debug.BuildInfo) Build {
	b := Build{Version: bi.Main.Version, GoVersion: bi.GoVersion}
	if b.Version == "" {
		b.Version = "(devel)"
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			b.Revision = s.Value
		case "vcs.time":
			b.Time = s.Value
		case "vcs.modified":
			b.Modified = s.Value == "true"
		}
	}
	return b
}

// String is the line --version prints after the program's name:
// "v0.0.0-20260101120000-abcdef123456 (revision abcdef1234…, 2026-01-01T12:00:00Z) go1.26.8".
func (b Build) String() string {
	var sb strings.Builder
	sb.WriteString(b.Version)
	if b.Revision != "" {
		sb.WriteString(" (revision " + b.Revision)
		if b.Time != "" {
			sb.WriteString(", " + b.Time)
		}
		if b.Modified {
			sb.WriteString(", modified")
		}
		sb.WriteString(")")
	}
	if b.GoVersion != "" {
		sb.WriteString(" " + b.GoVersion)
	}
	return sb.String()
}
