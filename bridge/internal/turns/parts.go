package turns

import (
	"context"
	"time"

	"github.com/rs/zerolog"

	"github.com/aapagui/aapagui/store"
)

// WriteTimeout bounds one try of a turn's write that stands for what the
// turn received: its last one, and each part of a long text it holds
// apart.
const WriteTimeout = 5 * time.Second

// SpillTo is a translator's TextSpill (translate.TextSpill) for a turn's
// long texts: each part written with write (the conversation's
// AddHistoryPart or AddRecordPart), bounded by WriteTimeout and not
// cancelled with ctx (what came is stored when the client leaves). A
// failure is logged under the conversation's key and value (session or
// thread and its id).
func SpillTo(ctx context.Context, log *zerolog.Logger, key, value string, write func(context.Context, store.TextPart) error) func(ref string, i int, part []byte) error {
	ctx = context.WithoutCancel(ctx)
	return func(ref string, i int, part []byte) error {
		wctx, cancel := context.WithTimeout(ctx, WriteTimeout)
		defer cancel()
		err := write(wctx, store.TextPart{Ref: ref, Index: i, Data: part})
		if err != nil {
			log.Error().Err(err).Str(key, value).Msg("store: a part of a long text could not be stored; the rest of it is held in memory")
		}
		return err
	}
}
