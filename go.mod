module github.com/indexd/indexd

go 1.26.0

require github.com/bmatcuk/doublestar/v4 v4.10.4

require (
	github.com/rogpeppe/go-internal v1.16.0 // indirect
	github.com/spf13/pflag v1.0.10 // indirect
	golang.org/x/sys v0.49.0 // indirect
)
