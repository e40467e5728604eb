module github.com/svcrun/svc

go 1.26.8

require (
	github.com/adhocore/gronx v1.20.4
	github.com/expr-lang/expr v1.17.8
	github.com/zalando/go-keyring v0.2.8
	golang.org/x/crypto v0.58.0
	modernc.org/sqlite v1.61.1
)

require (
	github.com/danieljoos/wincred v1.2.3 // indirect
	github.com/dustin/go-humanize v1.1.0 // indirect
	github.com/godbus/dbus/v5 v5.2.2 // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/mattn/go-isatty v0.0.24 // indirect
	github.com/ncruces/go-strftime v1.1.0 // indirect
	github.com/remyoudompheng/bigfft v0.0.0-20230129092748-24d4a6f8daec // indirect
	golang.org/x/sys v0.49.0 // indirect
	modernc.org/libc v1.79.0 // indirect
	modernc.org/mathutil v1.7.1 // indirect
	modernc.org/memory v1.12.1 // indirect
)

require (
	codeberg.org/go-pdf/fpdf v0.12.0
	github.com/gomutex/godocx v0.1.6-0.20250811222946-aefd2d814cd1
	github.com/santhosh-tekuri/jsonschema/v6 v6.0.3
	golang.org/x/text v0.43.0 // indirect
)

replace github.com/google/pprof => github.com/google/pprof v0.0.0-20260802141513-ef3492d7dac3
