//! Answering `CLIENT LIST`, `CLIENT KILL` and `CLIENT INFO` over the connection table (the commands parse,
//! the server answers: only it sees every connection).

use core::fmt::Write as _;

use timer_core::Tick;

use super::connection::Phase;
use super::Server;
use crate::command::{kill_reply, ClientsQuery, ClientsRequest, KillFilter};
use crate::resp::ReplyWriter;

impl Server<'_> {
    /// Writes the answer to `request` from the client in slot `me` into the reply buffer;
    /// returns its length and whether `me` itself is to be closed after it.
    pub(super) fn answer_clients(
        &mut self,
        me: usize,
        request: ClientsRequest,
        now: Tick,
    ) -> (usize, bool) {
        match request.0 {
            ClientsQuery::List { ids } => {
                let mut text = alloc::string::String::new();
                for index in 0..self.conns.len() {
                    let conn = &self.conns[index];
                    if conn.phase != Phase::Open || !conn.counted {
                        continue;
                    }
                    if ids.as_ref().is_some_and(|ids| !ids.contains(&conn.id)) {
                        continue;
                    }
                    let _ = self.describe(index, now, &mut text);
                }
                let protocol = self.conns[me].protocol;
                let mut out = ReplyWriter::growable(&mut self.reply_vec).speaking(protocol);
                let _ = out.verbatim(text.as_bytes());
                (out.len(), false)
            }
            #[cfg(feature = "blocking-lists")]
            ClientsQuery::Unblock { id, error } => {
                let target = (0..self.conns.len()).find(|&i| {
                    let conn = &self.conns[i];
                    conn.phase == Phase::Open && conn.counted && conn.id == id
                });
                let how = if error {
                    super::blocking::Unblocked::Error
                } else {
                    super::blocking::Unblocked::Timeout
                };
                let ended = target.is_some_and(|index| self.end_wait(index, how, now));
                let protocol = self.conns[me].protocol;
                let mut out = ReplyWriter::growable(&mut self.reply_vec).speaking(protocol);
                let _ = out.integer(i64::from(ended));
                (out.len(), false)
            }
            ClientsQuery::Info => {
                let mut text = alloc::string::String::new();
                let _ = self.describe(me, now, &mut text);
                let protocol = self.conns[me].protocol;
                let mut out = ReplyWriter::growable(&mut self.reply_vec).speaking(protocol);
                let _ = out.verbatim(text.as_bytes());
                (out.len(), false)
            }
            ClientsQuery::Kill(filter) => {
                let mut killed = 0;
                let mut me_too = false;
                for index in 0..self.conns.len() {
                    if !self.matches(index, &filter) || (index == me && filter.skip_me) {
                        continue;
                    }
                    killed += 1;
                    if index == me {
                        me_too = true;
                    } else {
                        self.begin_close(index, now);
                    }
                }
                let protocol = self.conns[me].protocol;
                let mut out = ReplyWriter::growable(&mut self.reply_vec).speaking(protocol);
                let _ = kill_reply(&filter, killed, &mut out);
                (out.len(), me_too)
            }
        }
    }

    /// The `ip:port` a client connected from, and the one it connected to.
    fn addresses(&self, index: usize) -> (heapless::String<24>, heapless::String<24>) {
        let mut addr = heapless::String::new();
        let mut laddr = heapless::String::new();
        if let Some(remote) = self.conns[index].remote {
            let _ = write!(addr, "{}:{}", remote.addr, remote.port);
        }
        if let Some(local) = self.ipv4_address() {
            let _ = write!(laddr, "{}:{}", local.address(), self.port);
        }
        (addr, laddr)
    }

    /// Whether the client in slot `index` is one `filter` names.
    fn matches(&self, index: usize, filter: &KillFilter) -> bool {
        let conn = &self.conns[index];
        if conn.phase != Phase::Open || !conn.counted || filter.none {
            return false;
        }
        let (addr, laddr) = self.addresses(index);
        filter.id.is_none_or(|id| id == conn.id)
            && filter.addr.as_deref().is_none_or(|a| a == addr.as_bytes())
            && filter
                .laddr
                .as_deref()
                .is_none_or(|a| a == laddr.as_bytes())
    }

    /// One `CLIENT LIST` line, with the fields this server has (Redis' names and order; the
    /// fields it has no counterpart for are left out).
    fn describe(
        &self,
        index: usize,
        now: Tick,
        text: &mut alloc::string::String,
    ) -> core::fmt::Result {
        let conn = &self.conns[index];
        let (addr, laddr) = self.addresses(index);
        let name = core::str::from_utf8(conn.name.as_bytes()).unwrap_or_default();
        #[cfg(feature = "transactions")]
        let queued = conn
            .transaction
            .is_open()
            .then(|| conn.transaction.queued_count());
        #[cfg(not(feature = "transactions"))]
        let queued: Option<usize> = None;
        writeln!(
            text,
            "id={} addr={} laddr={} name={} age={} idle={} flags={} db=0 sub=0 psub=0 ssub=0 multi={} qbuf={} user=default resp={}",
            conn.id,
            addr,
            laddr,
            name,
            now.saturating_sub(conn.accepted_at) / 1000,
            now.saturating_sub(conn.idle_since) / 1000,
            if queued.is_some() { "x" } else { "N" },
            queued.map_or(-1, |count| count as i64),
            conn.input_len,
            conn.protocol.version(),
        )
    }
}
