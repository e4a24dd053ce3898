module github.com/indexd/indexd

go 1.26.0

require github.com/bmatcuk/doublestar/v4 v4.10.4
