// SPDX-License-Identifier: GPL-2.0
/*
 * auxread-spe.c: DAMON's Arm SPE decoder, mm/damon/perf/spe.c of the tree
 * (SPE_C), unchanged, built for user space with tests/fuzz/shim/ as
 * scripts/spe-fuzz.sh builds it, for auxread.c.
 */
#include SPE_C

const size_t auxread_max_record = DAMON_SPE_MAX_RECORD_SZ;

/*
 * Decode the record at @buf as the kdamond's drain does: the bytes consumed
 * or the decoder's error; *kind 0 for padding, 1 for a record that DAMON
 * would not report, 2 for a load or store at *va.
 */
int auxread_decode(const u8 *buf, size_t len, unsigned long pos, int *kind,
		   u64 *va)
{
	/* the layouts that the reader learns, as the kdamond's drain does */
	static struct damon_spe_layouts layouts;
	struct damon_spe_record rec;
	int ret = damon_spe_decode(&layouts, buf, len, pos, &rec);

	if (ret < 0)
		return ret;
	switch (damon_spe_record_verdict(&rec, false)) {
	case DAMON_SPE_PADDING:
		*kind = 0;
		break;
	case DAMON_SPE_USE:
		*kind = 2;
		*va = rec.va;
		break;
	default:
		*kind = 1;
	}
	return ret;
}
