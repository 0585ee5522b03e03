/*
 * The args-capture rendezvous (kernel/pto_capture_slot.c) for spin: NC
 * cores run NT tasks of active mask M through one slot, a supervisor
 * answers their request lines. Names are the code's; pto_cs_* labels
 * mark the step each block models. Budgets expire at any wait. Each
 * guard is one atomic step (the code's ordering argument is its own).
 * Planted bugs: -DBUG_CLAIM_READY, -DBUG_NO_DEPART, -DBUG_NO_ABORT_ACK,
 * -DBUG_PEER_ANY_SEQ, -DBUG_SEQ_TWICE (tests/model/run).
 */
#ifndef NC
#define NC 3		/* cores of the task (2 or 3) */
#endif
#ifndef NT
#define NT 2		/* tasks through the slot, one after the other */
#endif
#define M ((1 << NC) - 1)
/* States a core joins in; every other one is a claim's source. */
#ifdef BUG_CLAIM_READY
#define JOINS(s, occ) (s == CLAIMING || (s == READY && occ != 0))
#else
#define JOINS(s, occ) (s == CLAIMING || s == READY)
#endif

#define FREE 0
#define CLAIMING 1
#define READY 2
#define SETTLED 3
#define BEFORE 0
#define AFTER 1

#define ST_NONE 0
#define ST_INPROGRESS 1
#define ST_SEALED 3
#define ST_ABORTED 4

/* struct pto_capture_slot: claim = (claim_state, claim_occ) */
byte claim_state, claim_occ;
byte arrived[2], released[2];
byte publisher_core[2], publisher_seq[2];	/* core + 1, phase_seq; 0: none */
byte aborted;
/* struct pto_capture_req, by core; req_task stands for (run_epoch, task_id) */
byte req_tick[NC], req_task[NC], req_phase[NC], req_seq[NC];
/* struct pto_capture_ack, by core; ack_phase is the model's, not the code's */
byte ack_status[NC], ack_tick[NC], ack_task[NC], ack_seq[NC], ack_phase[NC];

byte completed;		/* the last task whose completion was published */
bit run_fatal;
byte done;
/* ghosts */
byte claimers;			/* cores inside pto_cs_initialize */
byte inside[NT + 2];		/* participants of each occupancy not yet left */
byte reading_line[NC], reading_seq[NC];	/* whose ack line, which phase_seq */
byte published[2 * NT];		/* requests of each (task, phase) */

proctype core(byte me)
{
	byte k = 1, occ, s, o, ph, old, pubc, pubs, seq;
	byte mybit = 1 << me;
	bit pub_me, timed, won;

next_task:
	if
	:: k > NT -> goto out
	:: else
	fi;
	(completed >= k - 1 || run_fatal);	/* dispatched after its predecessor */
	if
	:: run_fatal -> goto out
	:: else
	fi;
	occ = 0;
pto_cs_claim:
	atomic { s = claim_state; o = claim_occ };
	if
	:: JOINS(s, occ) ->
		if
		:: occ != 0 && o != occ -> goto fatal
		:: occ == 0 -> atomic { occ = o; inside[occ]++ }
		:: else
		fi;
		if
		:: s == READY -> goto joined
		:: else ->
			if
			:: (claim_state != CLAIMING || claim_occ != occ) -> goto pto_cs_claim
			:: goto init_lost	/* budget expired in CLAIMING */
			fi
		fi
	:: else ->
		if
		:: occ != 0 -> goto fatal
		:: else
		fi;
		atomic {
			if
			:: claim_state == s && claim_occ == o ->
				assert(o <= NT);
				claim_state = CLAIMING; claim_occ = o + 1; won = 1
			:: else -> won = 0
			fi
		};
		if
		:: !won -> goto pto_cs_claim
		:: else
		fi;
		atomic {
			occ = o + 1;
			assert(inside[o] == 0);		/* no reuse before departure */
			inside[occ]++;
			claimers++;
			assert(claimers == 1)		/* no two claimers */
		}
	fi;
pto_cs_initialize:
	arrived[BEFORE] = 0; arrived[AFTER] = 0;
	released[BEFORE] = 0; released[AFTER] = 0;
	atomic { publisher_core[BEFORE] = 0; publisher_seq[BEFORE] = 0 };
	atomic { publisher_core[AFTER] = 0; publisher_seq[AFTER] = 0 };
	aborted = 0;
	claimers--;
pto_cs_ready:
	claim_state = READY;
joined:
	ph = BEFORE;
pto_cs_arrive:
	atomic {
		if
		:: claim_state == READY && claim_occ == occ ->
			old = arrived[ph]; arrived[ph] = old | mybit
		:: else -> goto fatal
		fi
	};
	assert((old & mybit) == 0);
	pub_me = ((old | mybit) == M);
	pubc = 0;
	timed = 0;
	if
	:: pub_me ->
pto_cs_request:
		seq++;
		req_task[me] = k; req_phase[me] = ph; req_seq[me] = seq;
		req_tick[me]++;		/* last: the supervisor's trigger */
		atomic {
			published[2 * (k - 1) + ph]++;
			assert(published[2 * (k - 1) + ph] == 1);
			publisher_core[ph] = me + 1; publisher_seq[ph] = seq;
			pubc = me + 1; pubs = seq;
			reading_line[me] = pubc; reading_seq[me] = pubs
		}
	:: else
	fi;
pto_cs_poll:
	do
	:: pubc == 0 && publisher_core[ph] != 0 ->	/* pto_cs_follow */
		atomic {
			pubc = publisher_core[ph]; pubs = publisher_seq[ph];
			reading_line[me] = pubc; reading_seq[me] = pubs
		}
	:: !(claim_state == READY && claim_occ == occ) -> goto fatal
	:: pubc != 0 && ack_seq[pubc - 1] == pubs && ack_task[pubc - 1] == k &&
	   ack_status[pubc - 1] == ST_ABORTED -> goto left_aborted
	:: pubc != 0 &&
#ifndef BUG_PEER_ANY_SEQ
	   ack_seq[pubc - 1] == pubs &&
#endif
	   ack_task[pubc - 1] == k && ack_status[pubc - 1] == ST_SEALED &&
	   (!pub_me || ack_tick[me] == req_tick[me]) ->
		/* no seal accepted for another phase or occupancy */
		assert(ack_phase[pubc - 1] == ph && ack_task[pubc - 1] == occ);
		break
	:: pub_me && ack_seq[me] == pubs && ack_task[me] == k &&
	   ack_status[me] == ST_INPROGRESS && ack_tick[me] == req_tick[me] ->
#ifdef BUG_SEQ_TWICE
		seq++; req_seq[me] = seq;
#endif
		req_tick[me]++		/* republish: same phase_seq */
	:: !timed ->			/* pto_cs_expire, first budget */
		atomic {
			timed = 1; run_fatal = 1;
			if
			:: aborted == 0 -> aborted = 1
			:: else
			fi
		}
	:: timed && publisher_core[ph] == 0 -> goto lost	/* second budget */
	od;
pto_cs_release:
	atomic {	/* the bit is the departure */
		old = released[ph]; released[ph] = old | mybit;
		reading_line[me] = 0;
		if
		:: ph == AFTER -> inside[occ]--
		:: else
		fi
	};
	if
	:: ph == BEFORE -> ph = AFTER; goto pto_cs_arrive
	:: else
	fi;
	if
	:: (old | mybit) == M ->
		if
		:: aborted != 0 -> run_fatal = 1	/* never settled */
		:: else ->
			claim_state = SETTLED;
			completed = k	/* completion after SETTLED */
		fi
	:: else ->
		if
		:: pub_me ->	/* its line holds the seal the peers read */
#ifndef BUG_NO_DEPART
			(released[AFTER] == M ||
			 !(claim_state == READY && claim_occ == occ))
#endif
		:: else
		fi
	fi;
	k++;
	goto next_task;

init_lost:
left_aborted:
lost:
fatal:
	atomic {
		run_fatal = 1;
		reading_line[me] = 0;
		if
		:: occ != 0 -> inside[occ]--
		:: else
		fi
	};
out:
	done++
}

/* pto_cs_ack: status, tick echo, then the identity; reuse after departure. */
inline pto_cs_ack(c, status)
{
	d_step {
		if
		:: ack_seq[c] != vseq[c] ->
			j = 0;
			do
			:: j < NC ->
				/* no reader of the seal it replaces */
				assert(reading_line[j] != c + 1 ||
				       reading_seq[j] != ack_seq[c]);
				j++
			:: else -> break
			od
		:: else
		fi;
		ack_status[c] = status; ack_tick[c] = vtick[c];
		ack_task[c] = vtask[c]; ack_phase[c] = vphase[c];
		ack_seq[c] = vseq[c]; j = 0
	}
}

inline serve(c)
{
	atomic {	/* pto_cs_accept */
		vtick[c] = req_tick[c]; last[c] = vtick[c];
		if
		:: vseq[c] != req_seq[c] -> nprog[c] = 0
		:: else
		fi;
		vtask[c] = req_task[c]; vphase[c] = req_phase[c];
		vseq[c] = req_seq[c]
	};
	if
	:: aborted != 0 ->
#ifndef BUG_NO_ABORT_ACK
		pto_cs_ack(c, ST_ABORTED);
#endif
		serving[c] = 0
	:: else -> pto_cs_ack(c, ST_SEALED); serving[c] = 0
	:: nprog[c] < 1 -> nprog[c]++; pto_cs_ack(c, ST_INPROGRESS); serving[c] = 1
	fi
}

proctype supervisor()
{
	byte last[NC], vtick[NC], vtask[NC], vphase[NC], vseq[NC], nprog[NC];
	bit serving[NC];
	byte j;

	do
	:: done == NC -> break
	:: req_tick[0] != last[0] -> serve(0)
	:: req_tick[1] != last[1] -> serve(1)
#if NC > 2
	:: req_tick[2] != last[2] -> serve(2)
#endif
#ifndef BUG_NO_ABORT_ACK
	:: aborted != 0 && serving[0] -> pto_cs_ack(0, ST_ABORTED); serving[0] = 0
	:: aborted != 0 && serving[1] -> pto_cs_ack(1, ST_ABORTED); serving[1] = 0
#if NC > 2
	:: aborted != 0 && serving[2] -> pto_cs_ack(2, ST_ABORTED); serving[2] = 0
#endif
#endif
	od
}

init
{
	atomic {
		run core(0); run core(1);
#if NC > 2
		run core(2);
#endif
		run supervisor()
	}
}
