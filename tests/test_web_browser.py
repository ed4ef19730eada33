"""The web client in a real headless Chromium: two players race to a result by clicking, a third watches both
boards live, a reload resumes the seat, the rematch button starts a new race, the replay steps through every move.

Screenshots of every page are saved under tmp/artifacts/web/.
"""

from __future__ import annotations

import re

import msgpack
from browser_helpers import click_move, create_race, destination, first_visit, http_url, launched_browser, shot, until
from playwright.async_api import Dialog, Page, ViewportSize, expect
from race_helpers import player, seated_race, server_config
from websockets.asyncio.server import ServerConnection, serve
from winning_lines import winning_deal

from client.race_view import closed_reason_words, race_status_words
from server.app import RaceServer
from shared import Board, Rules, action_text, card_text, parse_action
from shared.cards import Card
from shared.protocol import CloseReason, RaceSettings, RaceStatus

PHONE = ViewportSize(width=390, height=844)
DESKTOP = ViewportSize(width=1280, height=900)


async def drag_move(page: Page, board: str, move: str) -> None:
    """Play ``move`` by dragging its card onto its destination pile."""
    card, places = move.split()
    source = await page.locator(f'{board} [data-card="{card}"]').bounding_box()
    target = await page.locator(f'{board} [data-pile="{places.split(">")[1]}"]').bounding_box()
    assert source is not None and target is not None
    await page.mouse.move(source["x"] + source["width"] / 2, source["y"] + source["height"] / 2)
    await page.mouse.down()
    await page.mouse.move(target["x"] + target["width"] / 2, target["y"] + target["height"] / 2, steps=8)
    await page.mouse.up()
    await expect(page.locator(destination(board, move))).to_be_visible()


async def test_two_players_race_to_a_result_by_clicking_while_a_third_watches_then_rematch_and_replay(race_server: RaceServer) -> None:
    seed, line = winning_deal()
    site = http_url(race_server.url)
    board = ".race-page .table"
    async with launched_browser() as browser:
        ann_context = await browser.new_context(viewport=DESKTOP)
        bob_context = await browser.new_context(viewport=PHONE, has_touch=True)
        cid_context = await browser.new_context(viewport=DESKTOP)
        ann, bob, cid = await ann_context.new_page(), await bob_context.new_page(), await cid_context.new_page()
        errors: list[str] = []
        for page in (ann, bob, cid):
            page.on("pageerror", lambda error: errors.append(str(error)))

        # Ann creates a race with a known winnable seed and no spectator delay.
        await first_visit(ann, site + "/", "Ann")
        await shot(ann, "01-lobby")
        await ann.click("details.more summary")
        await ann.fill("input[name=seed]", str(seed))
        await ann.fill("input[name=spectator_delay]", "0")
        await ann.click("button[data-action=create]")
        await expect(ann.locator(".overlay.waiting")).to_be_visible()
        race = ann.url.rsplit("/", 1)[1]
        assert re.fullmatch(r"[A-Za-z0-9]{11}", race), ann.url
        assert await ann.input_value(".share-link") == f"{site}/race/{race}"
        await shot(ann, "02-race-waiting")

        # Bob sees it in the lobby (live) and joins it.
        await first_visit(bob, site + "/", "Bob")
        await expect(bob.locator(f'#open-races [data-race="{race}"]')).to_be_visible()
        await shot(bob, "01b-lobby-phone")
        await bob.click(f'#open-races [data-race="{race}"] button')
        await expect(bob.locator(".race-page [data-status=running]")).to_be_visible()
        await expect(ann.locator(".race-page [data-status=running]")).to_be_visible()
        await expect(bob.locator(".race-settings .deal-text")).to_contain_text("chosen seed")  # the joiner is told
        assert f"seed {seed}" not in await bob.locator(".race-page").inner_text()  # the seed itself only with the result

        # Cid watches: both boards drawn.
        await first_visit(cid, f"{site}/watch/{race}", "Cid")
        await expect(cid.locator('.watch-page .side[data-slot="1"] [data-pile="b"] .card')).to_have_count(16)

        # Bob: a double-click sends a card home, keyboard entry, click-click, then a reload mid-race.
        bob_line = list(line[:4])
        await bob.dblclick(f'{board} [data-card="AS"]')
        await expect(bob.locator(destination(board, bob_line[0]))).to_be_visible()
        await bob.keyboard.type("2s")
        await expect(bob.locator(f'{board} .card.selected[data-card="2S"]')).to_be_visible()
        await bob.keyboard.type("f")
        await expect(bob.locator(destination(board, bob_line[1]))).to_be_visible()
        await click_move(bob, board, bob_line[2])
        await bob.reload()
        await expect(bob.locator(".race-page [data-status=running]")).to_be_visible()
        await expect(bob.locator(f'{board} [data-pile="f"] [data-card="3S"]')).to_be_visible()
        await expect(bob.locator(f'{board} [data-pile="b"] [data-card="AS"]')).to_have_count(0)
        await drag_move(bob, board, bob_line[3])  # drag and drop; the seat still plays after the reload

        # A move the server refuses is shown with its reason and changes nothing.
        await bob.click(f'{board} [data-card="7H"]')
        await bob.click(f'{board} [data-pile="2"]')
        await expect(bob.locator(".notice .refusal")).to_contain_text("Refused: 7♥ can't go on column 2: it ends in ")
        await expect(bob.locator(".notice .refusal")).to_have_attribute("data-code", "column_rank_mismatch")
        await expect(bob.locator(f'{board} [data-pile="6"] [data-card="7H"]')).to_be_visible()
        await shot(bob, "03-race-phone-refusal")

        # Ann plays the whole winning line by clicking.
        for index, move in enumerate(line):
            await click_move(ann, board, move)
            if index == 40:
                await expect(ann.locator('.player[data-slot="1"] .count')).to_have_attribute("data-count", "4")
                await shot(ann, "04-race-midway")
                await shot(cid, "05-watch-midway")
        await expect(ann.locator(".result .headline")).to_have_text("You win!")
        await expect(ann.locator(".result .reveal")).to_contain_text(f"seed {seed}")
        await expect(bob.locator(".result .headline")).to_have_text("Ann (guest) wins")
        await shot(ann, "06-result-winner")
        await shot(bob, "07-result-phone")

        # The spectator's boards reach the final position of both players.
        bob_final = Board.deal(seed)
        for move in bob_line:
            bob_final.play(parse_action(move))
        await expect(cid.locator('.side[data-slot="0"] .score strong')).to_have_text("52")
        await expect(cid.locator('.side[data-slot="1"] .score strong')).to_have_text(str(bob_final.foundation_count))
        for column, cards in enumerate(bob_final.columns, start=1):
            shown = cid.locator(f'.side[data-slot="1"] [data-pile="{column}"] [data-card]')
            assert await shown.evaluate_all("nodes => nodes.map(n => n.dataset.card)") == [card_name(card) for card in cards]
        await expect(cid.locator(".watch-footer .result .headline")).to_have_text("Ann (guest) wins")
        await shot(cid, "08-watch-final")

        # Rematch: Ann offers, Bob accepts; both land in the same new race.
        await ann.click("button.rematch")
        await expect(bob.locator("button.rematch")).to_have_text("Accept rematch")
        await bob.click("button.rematch")
        await expect(bob).not_to_have_url(f"{site}/race/{race}")
        await expect(ann).to_have_url(bob.url)
        await expect(ann.locator(".race-page [data-status=running]")).to_be_visible()
        await expect(ann.locator(f'{board} [data-pile="b"] .card')).to_have_count(16)
        await shot(ann, "09-rematch")

        # The replay steps through every move of both players.
        await cid.goto(f"{site}/replay/{race}")
        total = len(line) + len(bob_line)
        await expect(cid.locator(".move-list li")).to_have_count(total)
        for _ in range(total):
            await cid.click("button[data-action=step]")
        await expect(cid.locator(".counter")).to_have_attribute("data-position", str(total))
        await expect(cid.locator('.side[data-slot="0"] .score strong')).to_have_text("52")
        await expect(cid.locator('.side[data-slot="1"] .score strong')).to_have_text(str(bob_final.foundation_count))
        await shot(cid, "10-replay-end")
        await cid.click("button[data-action=back]")
        await expect(cid.locator(".counter")).to_have_attribute("data-position", str(total - 1))
        await expect(cid.locator('.side[data-slot="0"] .score strong')).to_have_text("51")
        await cid.click(".move-list li[data-position='10']")
        await expect(cid.locator(".counter")).to_have_attribute("data-position", "10")
        await shot(cid, "11-replay-move-10")
        assert errors == []


def card_name(card: Card) -> str:
    """The notation of an engine card (its data-card value)."""
    return card_text(card)


async def test_the_browser_engine_deals_moves_and_decodes_like_the_server(race_server: RaceServer) -> None:
    """The page's deal matches the Python engine's for small and 64-bit seeds, its legal moves match along a whole
    winning line, its redeal matches, and 64-bit ints arrive as BigInt."""
    seeds = [0, 1, 15, 2**53 + 1, 2**64 - 1]
    async with launched_browser() as browser:
        page = await browser.new_page()
        await page.goto(http_url(race_server.url) + "/")
        build = await page.evaluate("document.documentElement.dataset.static.split('/')[2]")
        deals = await page.evaluate(
            """async ([build, seeds]) => {
                const engine = await import(`/static/${build}/js/engine.js`);
                return seeds.map((seed) => engine.deal(BigInt(seed)));
            }""",
            [build, [str(seed) for seed in seeds]],
        )
        win_seed, line = winning_deal()
        legal_js = await page.evaluate(
            """async ([build, seed, line]) => {
                const engine = await import(`/static/${build}/js/engine.js`);
                const board = engine.Board.deal(seed, { profile: "classic" });
                const seen = [];
                for (const text of [...line, null]) {
                    const cards = [...board.bouquet, ...board.columns.filter((c) => c.length).map((c) => c[c.length - 1])];
                    seen.push(cards.flatMap((card) => board.destinations(card).map((to) => `${card} ${board.sourceOf(card)}>${to}`)).sort());
                    if (text) board.play(engine.parseMove(text));
                }
                const redealt = engine.Board.deal(seed, { redeal_once: true });
                redealt.play({ special: "redeal" });
                return [seen, redealt.columns];
            }""",
            [build, win_seed, list(line)],
        )
        frame = list(msgpack.packb({"type": "countdown", "seed": 2**64 - 1, "at": 1795955679298, "small": 15}))
        decoded = await page.evaluate(
            """async ([build, bytes]) => {
                const protocol = await import(`/static/${build}/js/protocol.js`);
                const message = protocol.decode(new Uint8Array(bytes).buffer);
                const sent = protocol.encode({ type: "create", seed: 5000000000, big: 2n ** 64n - 1n, small: 7, at: 1795955679298 });
                return [typeof message.seed, String(message.seed), typeof message.at, message.at, typeof message.small, Array.from(sent)];
            }""",
            [build, frame],
        )
    for seed, shown in zip(seeds, deals, strict=True):
        board = Board.deal(seed)
        assert shown["columns"] == [[card_name(card) for card in column] for column in board.columns], seed
        assert shown["bouquet"] == [card_name(card) for card in board.bouquet], seed
    assert decoded[:5] == ["bigint", str(2**64 - 1), "number", 1795955679298, "number"]
    # Integers above 2^32 leave the page as integers (never float64), BigInt or not.
    sent = msgpack.unpackb(bytes(decoded[5]))
    assert sent == {"type": "create", "seed": 5_000_000_000, "big": 2**64 - 1, "small": 7, "at": 1795955679298}
    assert all(type(value) is int for key, value in sent.items() if key != "type")
    board = Board.deal(win_seed)
    for index, move in enumerate([*line, None]):
        assert legal_js[0][index] == sorted(action_text(legal) for legal in board.legal_moves()), index
        if move is not None:
            board.play(parse_action(move))
    redealt = Board.deal(win_seed, Rules(redeal_once=True))
    redealt.redeal()
    assert legal_js[1] == [[card_name(card) for card in column] for column in redealt.columns]


async def test_a_private_race_is_joined_from_its_invite_link_and_quick_match_pairs_two_pages(race_server: RaceServer) -> None:
    site = http_url(race_server.url)
    board = ".race-page .table"
    async with launched_browser() as browser:
        ann = await (await browser.new_context(viewport=DESKTOP)).new_page()
        bob = await (await browser.new_context(viewport=DESKTOP)).new_page()
        ann.on("dialog", lambda dialog: dialog.accept())
        await first_visit(ann, site + "/", "Ann")
        await ann.check("input[name=private]")
        await ann.click("details.more summary")
        await ann.fill("input[name=seed]", "15")
        await ann.click("button[data-action=create]")
        code = (await ann.locator(".invite-code code").text_content() or "").strip()
        assert re.fullmatch(r"[2-9A-HJ-NP-Z]{8}", code), code
        link = await ann.input_value(".share-link")
        assert link == f"{site}/invite/{code}"
        await shot(ann, "12-private-invite")

        await first_visit(bob, link, "Bob")
        await expect(bob.locator(".race-page [data-status=running]")).to_be_visible()
        assert bob.url == ann.url  # the invite page became the race page

        # Auto-move sends the safe cards (here the ace of spades) as ordinary moves.
        await bob.check("input[name=automove]")
        await expect(bob.locator(f'{board} [data-pile="f"] [data-card="AS"]')).to_be_visible()
        await expect(ann.locator('.player[data-slot="1"] .count')).to_have_attribute("data-count", "1")

        # A dropped connection (not closed on purpose) is retried: same session, the race synced from the last
        # event, and play goes on.
        player = await bob.evaluate("window.flowerGarden.conn.session.player")
        await bob.evaluate("window.seen = []; void window.flowerGarden.conn.on('status', (s) => window.seen.push(s))")
        await bob.evaluate("window.flowerGarden.conn.socket.close(4000, 'test drop')")
        await until(lambda: bob.evaluate("window.seen.includes('connected')"))
        assert await bob.evaluate("window.seen") == ["reconnecting", "connected"]
        await expect(bob.locator("#connection")).to_have_text("online")
        assert await bob.evaluate("window.flowerGarden.conn.session.player") == player
        await bob.dblclick(f'{board} [data-card="2S"]')
        await expect(bob.locator(f'{board} [data-pile="f"] [data-card="2S"]')).to_be_visible()
        await expect(ann.locator('.player[data-slot="1"] .count')).to_have_attribute("data-count", "2")
        await expect(ann.locator('.player[data-slot="1"] .presence')).to_have_text("online")

        # To the lobby and back (history): the race page rebuilds from every event again.
        await bob.click("a.brand")
        await expect(bob.locator("#open-races")).to_be_visible()
        await bob.go_back()
        await expect(bob.locator(f'{board} [data-pile="f"] [data-card="2S"]')).to_be_visible()

        await ann.click("button[data-action=resign]")  # Bob is ahead: the race is decided at once
        await expect(ann.locator(".result .headline")).to_have_text("Bob (guest) wins")
        await expect(bob.locator(".result .headline")).to_have_text("You win!")

        # Quick match: two pages asking for the same settings (undo allowed, seed 15) are paired in one race.
        for page in (ann, bob):
            await page.click(".result-overlay a[href='/']")
            await page.check("input[name=undo]")
            await page.click("details.more summary")
            await page.fill("input[name=seed]", "15")
            await page.click("button[data-action=quick-match]")
        await expect(ann.locator(".race-page [data-status=running]")).to_be_visible()
        await expect(bob.locator(".race-page [data-status=running]")).to_be_visible()
        assert ann.url == bob.url
        # Bob's auto-move (still on) plays the ace; Undo takes it back, and auto-move leaves it there.
        await expect(bob.locator(f'{board} [data-pile="f"] [data-card="AS"]')).to_be_visible()
        await bob.click("button[data-action=undo]")
        await expect(bob.locator(f'{board} [data-pile="b"] [data-card="AS"]')).to_be_visible()
        await expect(bob.locator("button[data-action=undo]")).to_be_disabled()
        await expect(ann.locator('.player[data-slot="1"] .count')).to_have_attribute("data-count", "0")
        await shot(bob, "13-quick-match-undo")


async def test_the_page_resends_a_move_refused_with_an_unknown_outcome_with_the_same_move_id_and_seq(race_server: RaceServer) -> None:
    """Against a scripted server: ``unavailable`` twice, then ``moved``; every try carries the same move_id and seq."""
    tries: list[dict[str, object]] = []

    async def scripted(connection: ServerConnection) -> None:
        async for frame in connection:
            request = msgpack.unpackb(frame)
            if request["type"] == "hello":
                reply = {"type": "welcome", "id": request["id"], "protocol": 1, "token": "t" * 43, "player": "p1", "name": "T", "server_time": 1795955679298}
            else:
                tries.append(request)
                if len(tries) < 3:
                    reply = {"type": "error", "id": request["id"], "code": "unavailable", "message": "store unreachable"}
                else:
                    reply = {"type": "moved", "id": request["id"], "race": request["race"], "move": request["move"], "seq": 1,
                             "count": 1, "left": 51, "status": "playing", "undos": 0, "duplicate": True}
            await connection.send(msgpack.packb(reply))

    async with serve(scripted, "127.0.0.1", 0) as fake, launched_browser() as browser:
        port = next(iter(fake.sockets)).getsockname()[1]
        page = await (await browser.new_context(bypass_csp=True)).new_page()  # the module talks to another port
        await page.goto(http_url(race_server.url) + "/")
        build = await page.evaluate("document.documentElement.dataset.static.split('/')[2]")
        reply = await page.evaluate(
            """async ([build, url]) => {
                const { Connection } = await import(`/static/${build}/js/connection.js`);
                const connection = new Connection(url);
                await connection.start("T", null);
                const moved = await connection.move("R1", "AS b>f");
                return [moved.duplicate, connection.nextSeq.get("R1")];
            }""",
            [build, f"ws://127.0.0.1:{port}/"],
        )
    assert reply == [True, 1]
    assert len(tries) == 3
    assert len({(str(t["move_id"]), t["seq"], t["move"]) for t in tries}) == 1
    assert len({t["id"] for t in tries}) == 3


async def test_joining_a_private_race_with_a_delay_below_the_minimum_asks_the_player_first(redis_url: str) -> None:
    """The invite page of a private race whose spectators lag less than the server's minimum asks before it joins
    (docs/FAIRPLAY.md); declined, nothing is joined; accepted, the page joins accepting that delay."""
    async with RaceServer(server_config(redis_url, min_spectator_delay_seconds=60.0)) as server:
        host = await player(server.url, "Ann")
        seated = await host.create(RaceSettings(private=True, spectator_delay=5))
        assert seated.race.invite is not None
        site = http_url(server.url)
        async with launched_browser() as browser:
            bob = await (await browser.new_context(viewport=DESKTOP)).new_page()
            asked: list[str] = []

            async def decline(dialog: Dialog) -> None:
                asked.append(dialog.message)
                await dialog.dismiss()

            bob.once("dialog", decline)
            await first_visit(bob, f"{site}/invite/{seated.race.invite}", "Bob")
            await expect(bob.locator(".error-text")).to_contain_text("5 s")
            assert asked and "only 5 s late" in asked[0]
            bob.once("dialog", lambda dialog: dialog.accept())
            await bob.goto(f"{site}/invite/{seated.race.invite}")
            await expect(bob.locator(".race-page [data-status=countdown], .race-page [data-status=running]")).to_be_visible()
        record = await server.races.record(seated.race.race)  # type: ignore[union-attr]
        assert len(record.seats) == 2 and record.settings.spectator_delay_ms == 5000
        await host.close()


async def test_the_page_says_in_words_why_a_race_closed(race_server: RaceServer) -> None:
    """Every ``race_closed`` reason has its words on the page (not the raw code), and an operator's message is kept."""
    async with launched_browser() as browser:
        page = await browser.new_page()
        await page.goto(http_url(race_server.url) + "/")
        build = await page.evaluate("document.documentElement.dataset.static.split('/')[2]")
        reasons = [reason.value for reason in CloseReason]
        words = await page.evaluate(
            """async ([build, reasons]) => {
                const dom = await import(`/static/${build}/js/dom.js`);
                const said = reasons.map((reason) => dom.closedWhy({ closedReason: reason, closedMessage: null }));
                said.push(dom.closedWhy({ closedReason: "operator", closedMessage: "reported abuse" }));
                return said;
            }""",
            [build, reasons],
        )
        # The same words as the terminal client's.
        assert words[:-1] == [closed_reason_words(reason) for reason in CloseReason]
        assert words[-1] == "an operator closed it (reported abuse)"


async def test_the_lobby_names_a_race_being_played_in_words_not_its_status_code(race_server: RaceServer) -> None:
    """The live list says "racing" (not the wire's ``running``), from the page's one mapping, which has the same
    words as the terminal client's for every status."""
    race = await seated_race(race_server.url, RaceSettings(seed=1, spectator_delay=0))
    try:
        async with launched_browser() as browser:
            page = await browser.new_page()
            await first_visit(page, http_url(race_server.url) + "/", "Dee")
            row = page.locator(f'#live-races [data-race="{race.race_id}"] .meta')
            await expect(row).to_contain_text("racing")
            assert "running" not in await row.inner_text()
            await shot(page, "lobby-live-race-words")
            build = await page.evaluate("document.documentElement.dataset.static.split('/')[2]")
            statuses = [status.value for status in RaceStatus]
            words = await page.evaluate(
                """async ([build, statuses]) => {
                    const dom = await import(`/static/${build}/js/dom.js`);
                    return statuses.map((status) => dom.statusText(status));
                }""",
                [build, statuses],
            )
            assert words == [race_status_words(status) for status in RaceStatus]
    finally:
        await race.close()


async def test_a_mistyped_address_says_there_is_no_such_page_and_links_to_the_lobby(race_server: RaceServer) -> None:
    async with launched_browser() as browser:
        page = await browser.new_page()
        await first_visit(page, http_url(race_server.url) + "/", "Eve")
        response = await page.goto(http_url(race_server.url) + "/races/abc")
        assert response is not None and response.status == 404
        await expect(page.locator(".not-found h1")).to_have_text("No such page")
        await expect(page.locator(".not-found p")).to_contain_text("There is no page at /races/abc.")
        await shot(page, "no-such-page")
        await page.click(".not-found a.button")
        await expect(page.locator("#open-races")).to_be_visible()


async def test_a_whole_race_is_played_from_the_keyboard_alone_focus_staying_on_the_board_after_every_move(race_server: RaceServer) -> None:
    """Tab reaches the available cards (not the 30 covered ones), Enter picks one up, ``f`` or a column sends it; after
    each move the focus is on a card of the board again (the board is redrawn), so the next Tab goes on from there."""
    seed, line = winning_deal()
    board = ".race-page .table"
    focused = "document.activeElement && document.activeElement.closest('.race-page .table') ? document.activeElement.dataset.card : null"
    async with launched_browser() as browser:
        page = await browser.new_page(viewport=DESKTOP)
        await first_visit(page, http_url(race_server.url) + "/", "Kay")
        await page.select_option("select[name=time_limit]", "")  # no limit: the test's pace is the machine's
        race = await create_race(page, seed)
        bob = await player(race_server.url, "Bob")
        try:
            await bob.join(race)
            await expect(page.locator(".race-page [data-status=running]")).to_be_visible()
            deal = Board.deal(seed)
            available = {card_name(column[-1]) for column in deal.columns} | {card_name(card) for card in deal.bouquet}
            tabbable = await page.locator(f"{board} .card").evaluate_all("nodes => nodes.filter((n) => n.tabIndex >= 0).map((n) => n.dataset.card)")
            assert set(tabbable) == available and len(tabbable) == len(available)
            for _ in range(80):  # from the top of the page to the board
                await page.keyboard.press("Tab")
                if await page.evaluate(focused):
                    break
            else:
                raise AssertionError("Tab never reached the board")
            await shot(page, "keyboard-focus")
            for number, move in enumerate(line, 1):
                card, places = move.split()
                order = await page.locator(f"{board} .card.available").evaluate_all("nodes => nodes.map((n) => n.dataset.card)")
                steps = order.index(card) - order.index(await page.evaluate(focused))
                for _ in range(abs(steps)):
                    await page.keyboard.press("Tab" if steps > 0 else "Shift+Tab")
                assert await page.evaluate(focused) == card, f"move {number}: Tab did not go from card to card to {card}"
                await page.keyboard.press("Enter")
                await expect(page.locator(f'{board} .card.selected[data-card="{card}"]')).to_be_visible()
                await page.keyboard.press(places.split(">")[1])
                await expect(page.locator(destination(board, move))).to_be_visible()
                await expect(page.locator(f"{board} .card.pending")).to_have_count(0)
                if number < len(line):
                    assert await page.evaluate(focused), f"after move {number} ({move}) the focus left the board"
                if number == 1:
                    await shot(page, "keyboard-focus-after-a-move")
            await expect(page.locator(".result .headline")).to_have_text("You win!")
        finally:
            await bob.close()


async def test_a_race_page_opened_on_a_race_under_way_with_auto_move_on_plays_the_safe_cards(race_server: RaceServer) -> None:
    """Auto-move acted only on an event or the countdown's end: a page that found its race already running (back in
    the tab's history, or a quick match whose `started` came before the page) waited for an event that need never
    come."""
    board = ".race-page .table"
    async with launched_browser() as browser:
        page = await browser.new_page(viewport=DESKTOP)
        await first_visit(page, http_url(race_server.url) + "/", "Kay")
        race = await create_race(page, 15)  # seed 15: the ace of spades is in the bouquet, a safe foundation move
        bob = await player(race_server.url, "Bob")
        try:
            await bob.join(race)
            await expect(page.locator(".race-page [data-status=running]")).to_be_visible()
            await expect(page.locator(f'{board} [data-pile="b"] [data-card="AS"]')).to_be_visible()
            await page.evaluate("localStorage.setItem('fg.automove', '1')")  # on, but no event after it
            await page.click("a.brand")  # to the lobby and back in the same tab: the page shows the race it follows
            await expect(page.locator("#open-races")).to_be_visible()
            await page.go_back()
            await expect(page.locator(f'{board} [data-pile="f"] [data-card="AS"]')).to_be_visible()
        finally:
            await bob.close()


async def test_on_a_phone_the_watch_pages_status_badge_stays_on_one_line(race_server: RaceServer) -> None:
    """"Waiting for an opponent" broke over two lines inside its pill beside "Watching <id>" at 390 px."""
    ann = await player(race_server.url, "Ann")
    try:
        race = (await ann.create(RaceSettings())).race.race
        async with launched_browser() as browser:
            page = await (await browser.new_context(viewport=PHONE, has_touch=True)).new_page()
            await first_visit(page, f"{http_url(race_server.url)}/watch/{race}", "Wes")
            badge = page.locator(".watch-page .status")
            await expect(badge).to_have_attribute("data-status", "waiting")
            await shot(page, "watch-phone-waiting")
            # The lines the badge's text is laid out on: the distinct tops of its text's boxes.
            tops = await badge.evaluate(
                "(node) => { const range = document.createRange(); range.selectNodeContents(node);"
                " return [...new Set([...range.getClientRects()].map((box) => Math.round(box.top)))]; }"
            )
            assert len(tops) == 1, f"the badge's text takes {len(tops)} lines"
    finally:
        await ann.close()
