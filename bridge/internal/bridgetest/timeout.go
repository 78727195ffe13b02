package bridgetest

import "time"

// Timeout bounds each wait of the shared tests, so that a hang shows as a
// failure rather than a stuck test run.
const Timeout = 20 * time.Second
