/*
 * The refresher's protocol, checked by spin in every interleaving (Scripts/check-model).
 *
 * What it stands for, step by step (the step names are the labels and comments "model:" below,
 * and the same names appear in one-line "// model: ..." comments in the Swift source): the article
 * Sources/SDKAuthorizationModeKit/SDKAuthorizationModeKit.docc/RefresherModel.md has the table.
 *
 * One refreshing provider on SingleFlight, as RefreshingTokenProvider configures it (a flight
 * lifetime with a timeout error, abandonsUnwatchedFlights, waitsForAbandonedWork), with the store
 * slot of IDTokenStore (save after finish with the flight's generation, removal after a logout,
 * the identity moved in reset's update); with -DCACHING the flight has no lifetime, as
 * CachingAuthorizationProvider configures it. NREQ requests of RequestAuthorizer's loop (2 in
 * Scripts/check-model)
 * (authorize, send, evaluate, authorize(retrying:)), a server that answers 200 or 401 in any
 * order, a fetch that succeeds, fails (also once cancelled), hangs for good or returns late, the
 * app's logout and change of user, the refresh window, a token's expiry, the flight lifetime, each
 * wait's deadline (the limit alarm) and, with -DCANCELS, a task's cancellation.
 *
 * Properties (assertions; (d) is spin's check for invalid end states, see the article):
 *  (a) PROP_A_*: a credential handed to a request was issued in the current generation, a retry's in
 *      its first attempt's generation; no token is stored once the logout of its generation is done.
 *  (b) PROP_B: at most one fetch of a generation runs at a time.
 *  (c) PROP_C: at most MAXREF refreshes are admitted per window, whatever starts them.
 *  (d) every request and every wait ends (no invalid end state; the model has no cycle).
 *  (e) PROP_E: a credential is stored only under the identity it was issued for (-DCHECK_E).
 *  (f) PROP_F: a fetch never waits on its own flight (-DCHECK_F).
 *
 * Switches: the code as it is by default; -DAPP_IDENTITY_DID_CHANGE: the app changes user through
 * AuthorizedHTTPClient.identityDidChange() instead of IDTokenStore.switchIdentity(to:);
 * -DFETCH_THROUGH_CLIENT: the fetch sends its token request through the client under the
 * provider's own rule (without it, under a .none rule, the documented workaround); -DMUT_SELF_WAIT:
 * that request joins its own flight and waits (the code before the fix); -DMUT_LATE_IDENTITY_READ:
 * the save reads the identity after its generation check (the code before issue 36's fix; the code
 * now compares the user the token was fetched for with the slot's identity under the lock); NO_RESET, NO_EXPIRY, NO_WINDOW: leave an event out of a search; MUT_*: the mutants,
 * each an earlier race put back (Scripts/check-model checks that each is refuted).
 */

#ifndef NREQ
#define NREQ    3            /* requests of the app */
#endif
#define NW      4            /* waiter slots: the requests, and the fetch's own token request */
#define SELF    3            /* the waiter slot of the fetch's own token request */
#ifndef MAXREF
#define MAXREF  2            /* RefreshWindow.maximumRefreshes */
#endif
#define NTOK    8            /* tokens issued, at most */
#define NGEN    4            /* generations, at most */
#define NFLIGHT 8

/* outcomes (SingleFlight.Outcome) */
#define O_NONE     0
#define O_VALUE    1
#define O_FAILED   2
#define O_LIMIT    3         /* deadlineExceeded (the wait's limit) */
#define O_CLEARED  4
#define O_CANCELLED 5

/* waiter slots (SingleFlight.Slot) */
#define S_IDLE     0
#define S_UNREG    1
#define S_BEFORE   2         /* endedBeforeRegistering */
#define S_WAITING  3
#define S_ENDED    4

/* ---- SingleFlight.State ---- */
byte gen = 0;                /* generation */
byte value = 0;              /* the current token, 0: none */
bool stale = false;          /* rejected mark or expiry: isUsable says no */
byte flight = 0;             /* the running flight's number, 0: none */
byte flightGen = 0;
byte work = 0;               /* abandonedWork: a flight whose work still runs */
bool workOld = false;        /* that work has reached the flight lifetime */
bool pendingStart = false;
byte flightCount = 0;
byte slot[NW];
byte outc[NW];
byte outTok[NW];
byte nwaiting = 0;
byte nunreg = 0;
bool alarmOn = false;        /* the one limit alarm */
bool cancelled[NFLIGHT];     /* what cancels a flight's work ran */
byte plock = 0;              /* the persistence lock's holder, 0: free */

/* ---- the provider's store slot (IDTokenStore.identity, CredentialStore) ---- */
byte identity = 1;           /* the user whose slot the store writes (1 alice, 2 bob) */
byte stored[3];              /* the slot of each identity: a token, 0: none */

/* ---- the app ---- */
byte appUser = 1;            /* the user the app is logged in as: tokens fetched now are theirs */

/* ---- RequestAuthorizer's refresh window (state.refreshes) ---- */
byte recFp[MAXREF];          /* a record's credential fingerprint (a token, 0: none) */
bool recStarted[MAXREF];
byte nrec = 0;

/* ---- ghosts: what the properties speak about ---- */
byte ntok = 0;
byte tokGen[NTOK + 1];       /* the generation a token was issued in */
byte tokUser[NTOK + 1];      /* the user it was issued for */
byte reqGen[NW];             /* the generation the authorizer read before asking (authorize) */
byte firstGen[NW];           /* ghost: the generation of a request's first attempt */
bool retried[NW];
byte runningIn[NGEN];        /* fetches running, per generation */
byte admitted = 0;           /* refreshes admitted in this window */
bool logoutDone[NGEN];       /* a logout ended this generation and its removal ran */
bool removing = false;       /* a logout's removal is still to run */

#define PROP_A_HANDOVER(t)      (tokGen[t] == gen)
#define PROP_A_RETRY(i, t)      (!retried[i] || tokGen[t] == firstGen[i])
#define PROP_A_STORE(t)         (!logoutDone[tokGen[t]])
#define PROP_B                  (runningIn[gen] <= 1)
#define PROP_C                  (admitted <= MAXREF)
#define PROP_E(t, who)          (tokUser[t] == who)
#define PROP_F(i, f)            (!(i == SELF && f == selfFlight))
/* the fetch's own token request would join the flight that fetch runs (running or abandoned
   work): register fails it at once (RequestError.refreshWaitsForItself, FlightsInProgress) */
#ifdef MUT_SELF_WAIT
#define SELF_WAIT(i)            false
#else
#define SELF_WAIT(i)            (i == SELF && selfFlight != 0 && (flight == selfFlight || (flight == 0 && work == selfFlight)))
#endif

/* temporaries used within one atomic step only: not part of the state */
hidden byte k;
hidden byte wasAb, pend, ok;

byte selfFlight = 0;         /* the flight whose fetch is sending its own token request */

/* model: handover -- a wait or the fast path gives a request the token t */
inline handover(hoI, hoT) {
    assert(PROP_A_HANDOVER(hoT));
    assert(PROP_A_RETRY(hoI, hoT))
}

/* model: endAll -- SingleFlight.State.endAll(with:at:alarms:) */
inline endAll(eaO, eaT) {
    k = 0;
    do
    :: k < NW ->
        if
        :: slot[k] == S_WAITING ->
            if :: eaO == O_VALUE -> handover(k, eaT) :: else -> skip fi;
            slot[k] = S_ENDED; outc[k] = eaO; outTok[k] = eaT
        :: slot[k] == S_UNREG ->
            if :: eaO == O_VALUE -> handover(k, eaT) :: else -> skip fi;
            slot[k] = S_BEFORE; outc[k] = eaO; outTok[k] = eaT; nunreg--
        :: else -> skip
        fi;
        k++
    :: else -> break
    od;
    k = 0;
    nwaiting = 0;
    alarmOn = false
}

/* model: newToken -- the server issues a token for the app's user, now */
inline newToken(ntT) {
    ntok++; ntT = ntok; tokGen[ntT] = gen; tokUser[ntT] = appUser
}

/* model: leaveUnwatched -- the last waiter left: the flight is abandoned, its work kept (keepWorking) */
inline leaveUnwatched() {
    if
    :: nwaiting == 0 && nunreg == 0 && flight != 0 ->
        work = flight; workOld = false; cancelled[flight] = true; flight = 0
    :: else -> skip
    fi
}

/* model: beginFlight -- SingleFlight.beginFlight */
inline beginFlight(bfNumber) {
    flightCount++; flight = flightCount; flightGen = gen; bfNumber = flight
}

/* model: admitRefresh -- RequestAuthorizer.admitRefresh (the refresh window), called by the
   provider's start closure with the token it replaces (refresh.current) */
inline admitRefresh(arOk) {
    arOk = false;
    k = 0;
    do
    :: k < nrec ->
        if
#ifdef MUT_GRANT_REUSED
        :: value != 0 && recFp[k] == value -> recStarted[k] = true; arOk = true; break   /* a grant taken twice */
#else
        :: value != 0 && recFp[k] == value && !recStarted[k] -> recStarted[k] = true; arOk = true; break
#endif
        :: else -> k++
        fi
    :: else -> break
    od;
    if
    :: !arOk && nrec < MAXREF -> recFp[nrec] = value; recStarted[nrec] = true; nrec++; arOk = true
    :: else -> skip
    fi;
    if :: arOk -> admitted++; assert(PROP_C) :: else -> skip fi
}

/* model: finish -- SingleFlight.finish(_:with:); ok: a value was delivered (not discarded) */
inline finish(fnF, fnGen, fnTok, fnSuccess, fnOk, fnRestarted) {
    fnOk = false; fnRestarted = 0;
    wasAb = (work == fnF);
    pend = false;
    if
    :: wasAb -> work = 0; workOld = false; pend = pendingStart; pendingStart = false
    :: else -> skip
    fi;
    if
#ifndef MUT_SWITCH_RESUMES
    :: fnGen != gen -> skip                                /* a reset came since: discarded */
#endif
    :: else ->
        if
        :: fnSuccess && (flight == fnF || wasAb) ->
            value = fnTok; stale = false; flight = 0; endAll(O_VALUE, fnTok); fnOk = true
        :: fnSuccess -> skip                              /* an abandoned flight's late value */
        :: !fnSuccess && flight == fnF -> flight = 0; endAll(O_FAILED, 0)
        :: !fnSuccess && flight != fnF ->
            /* the requests that waited behind abandoned work that failed get a flight of their own */
            if
            :: pend && flight == 0 && nwaiting + nunreg > 0 -> beginFlight(fnRestarted)
            :: else -> skip
            fi
        fi
    fi
}

/* model: persist -- SingleFlight.persist(_:generation:) around IDTokenStore.save: under the
   persistence lock, the generation checked, then the store written under the identity */
inline save(svTok, svGen, svWho) {
    atomic { plock == 0 -> plock = 255;
#ifndef MUT_LATE_IDENTITY_READ
        svWho = identity;                                 /* the slot's user, under the lock with the generation */
#endif
        saving = (svGen == gen) }
    atomic {
        if
        :: saving ->
#ifdef MUT_LATE_IDENTITY_READ
            svWho = identity;                             /* read after the check (the code before issue 36) */
#endif
            if
            :: svWho != 0 ->                              /* no user named: nothing is stored */
#ifdef CHECK_E
                assert(PROP_E(svTok, svWho));
#endif
                assert(PROP_A_STORE(svTok));
                stored[svWho] = svTok
            :: else -> skip
            fi
        :: else -> skip
        fi;
        plock = 0; saving = false; svWho = 0
    }
}

/* model: start -- the join's start closure (RefreshingTokenProvider.credential(for:)): the window
   admits the refresh or the flight fails with its refusal; then the fetch runs in a task */
inline start(stF, stGen) {
#ifdef MUT_UNGATED
    atomic { admitted++; assert(PROP_C); run Fetch(stF, stGen) }   /* the window is not asked */
#else
    atomic {
        admitRefresh(ok);
        if
        :: ok -> run Fetch(stF, stGen)
        :: else -> finish(stF, stGen, 0, false, ok, restarted)
           /* a refusal finishes only a current flight: no restart can follow */
        fi;
        ok = false
    }
#endif
}

/* model: wait -- SingleFlight.value / wait / register; then the wait ends (endAll, end, the limit
   alarm). `generation` is checked for a retry only (context.issuedGeneration). */
inline wait(wMe, checkGen, readGen) {
    got = 0; o = O_NONE; started = 0;
    atomic {
        if
        :: readGen -> reqGen[wMe] = gen; if :: !retried[wMe] -> firstGen[wMe] = gen :: else -> skip fi
        :: else -> skip
        fi;
        if
        :: checkGen && gen != reqGen[wMe] -> o = O_CLEARED
        :: else ->
            if
            :: value != 0 && !stale -> handover(wMe, value); o = O_VALUE; got = value
            :: else -> slot[wMe] = S_UNREG; nunreg++
            fi
        fi
    };
    if
    :: o == O_NONE ->
        /* model: register */
        atomic {
            if
            :: slot[wMe] == S_BEFORE -> o = outc[wMe]; got = outTok[wMe]; slot[wMe] = S_IDLE
            :: else ->
                nunreg--;
                if
                :: checkGen && gen != reqGen[wMe] -> o = O_CLEARED; slot[wMe] = S_IDLE
                :: !(checkGen && gen != reqGen[wMe]) && value != 0 && !stale ->
                    handover(wMe, value); o = O_VALUE; got = value; slot[wMe] = S_IDLE
                :: !(checkGen && gen != reqGen[wMe]) && !(value != 0 && !stale) && flight == 0 && work != 0 && workOld ->
                    o = O_FAILED; slot[wMe] = S_IDLE             /* flightTimeoutError at once */
                :: !(checkGen && gen != reqGen[wMe]) && !(value != 0 && !stale) && !(flight == 0 && work != 0 && workOld) && SELF_WAIT(wMe) ->
                    o = O_FAILED; slot[wMe] = S_IDLE             /* model: selfWait -- fails at once */
                :: !(checkGen && gen != reqGen[wMe]) && !(value != 0 && !stale) && !(flight == 0 && work != 0 && workOld) && !SELF_WAIT(wMe) ->
                    slot[wMe] = S_WAITING; nwaiting++;
                    alarmOn = true;
#ifdef CHECK_F
                    assert(PROP_F(wMe, flight));                 /* joins a running flight */
#endif
                    if
                    :: flight == 0 && work == 0 -> beginFlight(started); fgen = gen
#ifdef MUT_SECOND_FETCH
                    :: flight == 0 && work != 0 -> beginFlight(started); fgen = gen
#else
                    :: flight == 0 && work != 0 -> pendingStart = true
#endif
                    :: else -> skip
                    fi
#ifdef CHECK_F
                    ; assert(PROP_F(wMe, started))               /* starts the flight it runs in */
#endif
                fi
            fi
        };
        if
        :: started != 0 -> start(started, fgen); started = 0; fgen = 0
        :: else -> skip
        fi;
        if
        :: o == O_NONE ->
            do
            :: slot[wMe] == S_ENDED -> atomic { o = outc[wMe]; got = outTok[wMe]; slot[wMe] = S_IDLE }; break
            /* model: expireLimits -- the one alarm at the earliest limit (one pass over the waits) ends this wait */
            :: atomic { alarmOn && slot[wMe] == S_WAITING ->
                slot[wMe] = S_IDLE; o = O_LIMIT; nwaiting--;
#ifdef MUT_ALARM_LOST
                alarmOn = false;                            /* the next limit is not scheduled */
#else
                alarmOn = (nwaiting > 0);
#endif
                leaveUnwatched() }; break
#ifdef CANCELS
            /* model: end -- the task is cancelled (onCancel) */
            :: atomic { slot[wMe] == S_WAITING && cancels > 0 ->
                cancels--; slot[wMe] = S_IDLE; o = O_CANCELLED; nwaiting--;
                alarmOn = alarmOn && (nwaiting > 0);
                leaveUnwatched() }; break
#endif
            od
        :: else -> skip
        fi
    :: else -> skip
    fi
}

#ifdef CANCELS
byte cancels = 1;            /* task cancellations the app may make */
#endif

proctype Fetch(byte f; byte fg) {
    byte t = 0, started, got, o, restarted, who, fgen, startUser, startGen;
    bool saving, delivered;
    atomic { runningIn[fg]++; assert(PROP_B); startUser = appUser; startGen = gen };
#ifdef FETCH_THROUGH_CLIENT
    /* model: selfRequest -- the fetch sends its token request through the client, under the
       provider's own rule: it asks the provider for a credential */
    if
    :: atomic { selfFlight == 0 -> selfFlight = f };     /* one fetch's token request at a time */
        wait(SELF, false, true);
        selfFlight = 0
    :: else -> skip
    fi;
#endif
    /* model: fetch -- the refresh function returns a token (issued when it began or when it
       returns: late, after a logout or a change of user), fails (also when cancelled), or hangs
       for good, ignoring cancellation */
    if
    :: atomic {
           ntok++; t = ntok;
           if
           :: tokGen[t] = startGen; tokUser[t] = startUser     /* issued as it began */
           :: tokGen[t] = gen; tokUser[t] = appUser            /* issued as it returns */
           fi;
           startUser = 0; startGen = 0;
           runningIn[fg]--; finish(f, fg, t, true, ok, restarted); delivered = ok; ok = false };
       if
       :: delivered -> save(t, fg, who)                /* IDTokenStore: save after finish */
#ifdef MUT_LATE_STORE
       :: !delivered -> save(t, gen, who)              /* saved with the generation current now */
#endif
       :: else -> skip
       fi;
       delivered = false
    :: atomic { startUser = 0; startGen = 0; runningIn[fg]--; finish(f, fg, 0, false, ok, restarted); ok = false }
    :: true -> end_hang: false                         /* ignores cancellation, never returns */
    fi;
    t = 0;
    if
    :: restarted != 0 -> start(restarted, fg); restarted = 0
    :: else -> skip
    fi
}

proctype Req(byte me) {
    byte tok, started, got, o, restarted, fgen;
    /* model: authorize -- the generation read before asking (RequestAuthorizer.authorize), in the
       wait's first step */
    wait(me, false, true);
    if :: o != O_VALUE -> goto done :: else -> tok = got; got = 0; o = O_NONE fi;
send:
    /* model: send -- the server answers 200 (or the send fails: deadline, transport) or 401 */
    /* model: evaluate -- a 401 after a logout fails as cleared; otherwise credentialRejected marks
       the token stale and the window grants the retry (or not); a retry is rejected for good */
    atomic {
        if
        :: true -> goto done                            /* 200, or a failed send */
        :: true                                         /* 401 */
        fi;
        if :: retried[me] -> goto done :: else -> skip fi;
#ifndef MUT_DECORATOR
        if :: gen != reqGen[me] -> goto done :: else -> skip fi;
#endif
        if :: value == tok -> stale = true :: else -> skip fi;
        ok = false;
        k = 0;
        do
        :: k < nrec -> if :: recFp[k] == tok -> ok = true; break :: else -> k++ fi   /* alreadyRefreshing */
        :: else -> break
        od;
        k = 0;
        if
        :: !ok && nrec < MAXREF -> recFp[nrec] = tok; recStarted[nrec] = false; nrec++; ok = true
        :: else -> skip
        fi;
        if :: !ok -> goto done :: else -> skip fi;      /* refreshWindowExceeded */
        ok = false; tok = 0;
        /* model: retry -- authorize(retrying:) */
        retried[me] = true
    };
#ifdef MUT_DECORATOR
    /* a provider behind a decorator: the authorizer sees no Credential.Issuer, so nothing
       checks the generation, and the retry reads the current one */
    wait(me, false, true);
#else
    wait(me, true, false);                              /* the issued generation must still be current */
#endif
    if :: o != O_VALUE -> goto done :: else -> tok = got; got = 0; o = O_NONE fi;
    goto send;
done:
    tok = 0; got = 0; o = 0
}

/* model: reset -- SingleFlight.reset(updating:thenRemove:): logout (clearToken, clearIDToken) or
   change of user (switchIdentity(to:)) */
inline reset(rsUser, rsIdentity, rsRemoves) {
    atomic {
        gen++;
        appUser = rsUser;                               /* the app's session moves with it (an assumption) */
        identity = rsIdentity;
        value = 0; stale = false;
        work = 0; workOld = false; pendingStart = false;
#ifdef MUT_SWITCH_RESUMES
        /* the switch leaves the flight and its waiters as they are */
        skip
#else
        if :: flight != 0 -> cancelled[flight] = true; flight = 0 :: else -> skip fi;
        endAll(O_CLEARED, 0)
#endif
        ; removing = rsRemoves
    };
    atomic { plock == 0 ->
        if :: rsRemoves -> stored[identity] = 0; logoutDone[gen - 1] = true :: else -> skip fi;
        removing = false }
}

proctype Env() {
    byte t, g, nu;
    bool resets = 1, expiries = 1, windows = 1;
#ifdef NO_RESET
    resets = 0;
#endif
#ifdef NO_EXPIRY
    expiries = 0;
#endif
#ifdef NO_WINDOW
    windows = 0;
#endif
    do
    /* model: logout -- clearToken() / clearIDToken() */
    :: resets -> resets = 0; reset(appUser, identity, true)
    /* model: switchUser -- the app logs in as the other user and tells the provider */
    :: resets -> resets = 0;
#ifdef APP_IDENTITY_DID_CHANGE
        /* AuthorizedHTTPClient.identityDidChange() -> IDTokenStore.identityDidChange(to: nil): the
           identity moves to no user (0) in reset's update, then the previous user's slot is removed */
        nu = 3 - appUser; t = identity;
        reset(nu, 0, false);
        atomic { plock == 0 -> stored[t] = 0; t = 0 }
#else
        /* IDTokenStore.switchIdentity(to:): the identity moves in reset's update; then the
           stored token of the new user, if any, is installed while the generation is current */
        atomic { g = gen + 1; nu = 3 - appUser };
#ifdef MUT_IDENTITY_AFTER_RESET
        reset(nu, identity, false);
        identity = nu;                                  /* moved after the reset, not in its update */
#else
        reset(nu, nu, false);
#endif
        atomic {
            if
            :: stored[appUser] != 0 && gen == g && value == 0 ->
                ntok++; t = ntok; tokGen[t] = gen; tokUser[t] = tokUser[stored[appUser]]; value = t
            :: else -> skip
            fi
        }
#endif
    /* model: expiry -- the token's exp comes within the leeway */
    :: expiries && value != 0 -> expiries = 0; stale = true
    /* model: windowPasses -- RefreshWindow.interval passes: the window's records expire */
    :: windows -> windows = 0; atomic { nrec = 0; admitted = 0 }
#ifndef CACHING
    /* model: expire -- the running flight reaches its lifetime (refreshTimeout): it fails its
       waiters with credentialTimedOut, its work kept as running (keepWorking) and cancelled */
    :: atomic { flight != 0 ->
        work = flight; workOld = true; cancelled[flight] = true; flight = 0;
        endAll(O_FAILED, 0) }
    /* model: expireWork -- abandoned work reaches the lifetime: whoever waits for it fails */
    :: atomic { work != 0 && !workOld -> workOld = true; endAll(O_FAILED, 0) }
#endif
    :: break
    od
}

init {
    atomic {
        run Env();
        run Req(0)
#if NREQ > 1
        ; run Req(1)
#endif
#if NREQ > 2
        ; run Req(2)
#endif
    }
}
