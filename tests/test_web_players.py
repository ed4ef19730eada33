"""The players' side of the web client in a real headless Chromium: two players register, race rated to a result
by clicking and see their rating changes on the result screen, the leaderboard and their history page (whose
replay link opens); a guest alone in the lobby races a practice bot the server seats, labelled a bot throughout.

Screenshots land in tmp/artifacts/web/ (players-*.png).
"""

from __future__ import annotations

import secrets
from collections import deque

import pytest
from browser_helpers import click_move, first_visit, http_url, launched_browser, shot
from lobby_helpers import wait_until
from playwright.async_api import Locator, Page, ViewportSize, expect
from race_helpers import player, server_config
from winning_lines import WINNABLE_SEED

from client import RaceClient, ServerError
from server.app import RaceServer
from shared import Board, Move, action_text, parse_card
from shared.solver import Budget, Verdict, solve

DESKTOP = ViewportSize(width=1280, height=900)
BOARD = ".race-page .table"
PASSWORD = "correct horse battery"


async def submit_account_form(page: Page, kind: str, handle: str) -> Locator:
    """Open /account from the top bar and submit its ``kind`` form (``login``, ``register``) for ``handle``."""
    await page.click("#who [data-action=login]")
    form = page.locator(f"form[data-form={kind}]")
    await form.locator("input[name=handle]").fill(handle)
    await form.locator("input[name=password]").fill(PASSWORD)
    await form.locator("button[type=submit]").click()
    return form


async def register(page: Page, site: str, handle: str) -> None:
    """A first visit as a guest, then register ``handle`` on /account: the top bar then shows the handle."""
    await first_visit(page, site + "/", f"{handle} guest")
    await expect(page.locator("#who .kind-tag.guest")).to_be_visible()
    await submit_account_form(page, "register", handle)
    await expect(page.locator("#who .me-name")).to_have_text(handle)
    await expect(page.locator("#who .rating")).to_have_text("unrated")


async def shown_board(page: Page) -> Board:
    """The player's board as the page draws it (columns top to bottom, the bouquet), for planning moves."""
    columns = []
    for column in range(1, 7):
        cards = await page.locator(f'{BOARD} [data-pile="{column}"] [data-card]').evaluate_all("nodes => nodes.map(n => n.dataset.card)")
        columns.append([parse_card(text) for text in cards])
    bouquet = await page.locator(f'{BOARD} [data-pile="b"] [data-card]').evaluate_all("nodes => nodes.map(n => n.dataset.card)")
    return Board(columns, [parse_card(text) for text in bouquet])


def line_to_a_foundation(board: Board) -> list[Move]:
    """A short line of card moves that puts a card on a foundation: breadth first (50,000 positions at most), else
    the solver's."""
    queue: deque[tuple[Board, list[Move]]] = deque([(board, [])])
    seen = {(board.columns, board.bouquet)}
    while queue and len(seen) < 50_000:
        position, line = queue.popleft()
        for move in position.legal_moves():
            after = position.copy()
            after.play(move)
            if after.foundation_count > 0:
                return [*line, move]
            if (after.columns, after.bouquet) not in seen:
                seen.add((after.columns, after.bouquet))
                queue.append((after, [*line, move]))
    solved = solve(board, Budget(seconds=20))
    assert solved.verdict is Verdict.SOLVED, "no short line puts a card on a foundation and the solver found no win"
    replay = board.copy()
    for index, move in enumerate(solved.moves):
        replay.play(move)
        if replay.foundation_count > 0:
            return list(solved.moves[: index + 1])
    raise AssertionError("a winning line that puts no card on a foundation")


async def test_two_registered_players_race_rated_and_see_ratings_leaderboard_history_and_replay(redis_url: str) -> None:
    ann_handle, bob_handle = f"Ann{secrets.token_hex(3)}", f"Bob{secrets.token_hex(3)}"
    # Every rating is listed (two new players are provisional for 14 races at the default threshold). The race is
    # solvable-only (a deal the server proved winnable: about 1 deal in 300 lets no card reach a foundation at all).
    config = server_config(redis_url, provisional_deviation=400.0, seed_pool_target=1, seed_pool_seconds=2.0)
    async with RaceServer(config) as server, launched_browser() as browser:
        pool = server.seed_pool
        assert pool is not None

        async def pool_ready() -> bool:
            return await pool.size("classic") >= 1

        site = http_url(server.url)
        ann = await (await browser.new_context(viewport=DESKTOP)).new_page()
        bob = await (await browser.new_context(viewport=DESKTOP)).new_page()
        errors: list[str] = []
        for page in (ann, bob):
            page.on("pageerror", lambda error: errors.append(str(error)))
            page.on("dialog", lambda dialog: dialog.accept())

        # A guest cannot pick "rated"; the lobby says why.
        await first_visit(bob, site + "/", "Bob guest")
        await expect(bob.locator("input[name=rated]")).to_be_disabled()
        await expect(bob.locator(".rated-hint")).to_contain_text("log in to race rated")
        await shot(bob, "players-01-lobby-guest")
        await bob.context.clear_cookies()
        await bob.evaluate("localStorage.clear()")

        await register(ann, site, ann_handle)
        await shot(ann, "players-02-registered")
        await ann.reload()  # the session token carries the account: still logged in
        await expect(ann.locator("#who .me-name")).to_have_text(ann_handle)
        await expect(ann.locator("input[name=rated]")).to_be_enabled()
        await register(bob, site, bob_handle)

        # Ann opens a rated race; Bob joins it from the lobby, where Ann shows as a registered player.
        await ann.click("a.brand")
        await ann.check("input[name=rated]")
        await expect(ann.locator("input[name=undo]")).to_be_disabled()
        await ann.check("input[name=solvable_only]")
        await wait_until(pool_ready, timeout=90, what="a proven deal in the seed pool")
        await ann.click("button[data-action=create]")
        await expect(ann.locator(".overlay.waiting")).to_be_visible()
        race = ann.url.rsplit("/", 1)[1]
        await bob.click("a.brand")
        row = bob.locator(f'#open-races [data-race="{race}"]')
        await expect(row.locator(".pname.account")).to_have_text(ann_handle)
        await expect(row).to_contain_text("rated")
        await row.locator("button").click()
        await expect(ann.locator(".race-page [data-status=running]")).to_be_visible()
        await expect(bob.locator(".race-page [data-status=running]")).to_be_visible()

        # Ann puts a card on a foundation by clicking; Bob resigns: Ann wins the rated race.
        for move in line_to_a_foundation(await shown_board(ann)):
            await click_move(ann, BOARD, action_text(move))
        await bob.click("button[data-action=resign]")
        await expect(ann.locator(".result .headline")).to_have_text("You win!")
        await expect(bob.locator(".result .headline")).to_have_text(f"{ann_handle} wins")
        ann_change = ann.locator('.result-table tr[data-slot="0"] .rating-change')
        bob_change = ann.locator('.result-table tr[data-slot="1"] .rating-change')
        await expect(ann_change).to_have_text("1500 → 1662 (+162)")
        await expect(bob_change).to_have_text("1500 → 1338 (−162)")
        await expect(bob.locator('.result-table tr[data-slot="1"] .rating-change')).to_have_attribute("data-delta", "-162")
        await expect(ann.locator("#who .rating")).to_have_text("1662")
        await shot(ann, "players-03-result-rated")
        await shot(bob, "players-04-result-rated-loser")

        # The server books a result right after it (ratings, leaderboard, histories): wait for it like a reader would.
        async def booked() -> bool:
            stats = await observer.stats(bob_handle)
            return any(profile.races for profile in stats.profiles)

        observer = await player(server.url, "observer")
        try:
            await wait_until(booked, what="the race booked in Bob's stats")
        finally:
            await observer.close()

        # The leaderboard lists Ann with her new rating and her own rank; Bob sees his, below hers. (Other tests'
        # players share this Redis, so only the order of the two is known.)
        await ann.click("#who a.nav[href='/leaderboard']")
        ann_row = ann.locator("table.leaderboard tbody tr", has_text=ann_handle)
        await expect(ann_row.locator("td.rating")).to_have_text("1662")
        ann_rank = await ann_row.get_attribute("data-rank")
        await expect(ann.locator(".own-rank")).to_have_attribute("data-rank", ann_rank or "?")
        await shot(ann, "players-05-leaderboard")
        await bob.click("#who a.nav[href='/leaderboard']")
        await expect(bob.locator(".own-rank .rating")).to_have_text("1338")
        bob_rank = await bob.locator(".own-rank").get_attribute("data-rank")
        assert ann_rank is not None and bob_rank is not None and int(bob_rank) > int(ann_rank)

        # Ann's history page (from the leaderboard) lists the race with the win and its rating change; its replay opens.
        await ann_row.locator(".pname a").click()
        history = ann.locator(f'#history [data-race="{race}"]')
        await expect(history).to_contain_text("won")
        await expect(history.locator('.pname[data-kind="account"]')).to_have_text(bob_handle)
        await expect(history.locator(".rating-change")).to_have_text("1500 → 1662 (+162)")
        await expect(ann.locator('table.stats tr[data-profile="classic"]')).to_contain_text("1662")
        await shot(ann, "players-06-history")
        await history.locator("[data-action=replay]").click()
        await expect(ann.locator(".replay-page")).to_be_visible()
        await ann.click("button[data-action=end]")
        await expect(ann.locator(".result .headline")).to_have_text(f"{ann_handle} wins")
        await shot(ann, "players-07-replay")

        # Logging out continues as a guest, and the session ends on the server: its token is refused from then on.
        token = await ann.evaluate("localStorage.getItem('fg.token')")
        await ann.click("#who [data-action=logout]")
        await expect(ann.locator("#who .kind-tag.guest")).to_be_visible()
        probe = await RaceClient.connect(server.url)
        with pytest.raises(ServerError) as ended:
            await probe.hello("Probe", token)
        assert ended.value.code == "bad_token"
        await probe.close()
        assert errors == []


async def test_a_lone_guest_races_a_labelled_bot_from_the_lobby(redis_url: str) -> None:
    async with RaceServer(server_config(redis_url, bot_pace=0.0)) as server, launched_browser() as browser:
        site = http_url(server.url)
        cid = await (await browser.new_context(viewport=DESKTOP)).new_page()
        errors: list[str] = []
        cid.on("pageerror", lambda error: errors.append(str(error)))
        cid.on("dialog", lambda dialog: dialog.accept())
        await first_visit(cid, site + "/", "Cid")
        await expect(cid.locator(".bot-offer")).to_be_visible()
        await shot(cid, "players-08-lobby-bot-offer")
        # A winnable deal (seed 15), so the level-5 bot surely gets ahead (on a random deal both might end on 0: a draw).
        await cid.click("details.more summary")
        await cid.fill("input[name=seed]", str(WINNABLE_SEED))
        await cid.select_option(".bot-offer select[name=bot_level]", "5")
        await cid.click("button[data-action=race-bot]")
        bot_panel = cid.locator('.player[data-slot="1"]')
        await expect(bot_panel.locator('.pname[data-kind="bot"]')).to_contain_text("FlowerBot5_")
        await expect(cid.locator('.player[data-slot="0"] .pname[data-kind="guest"]')).to_contain_text("Cid")
        # Running, or finished already: at pace 0 a level-5 bot may clear the board before a loaded machine paints
        # the running race (the test once failed so).
        await expect(cid.locator(".race-page [data-status=running], .race-page [data-status=finished]")).to_be_visible()
        await shot(cid, "players-09-race-bot")
        # Resign: the bot wins once it has a card on a foundation. (A fast bot may have cleared the board already:
        # the button is then disabled and the click does nothing; the result is the same.)
        await cid.locator("button[data-action=resign]").dispatch_event("click")
        await expect(cid.locator(".result .headline")).to_contain_text("(bot) wins")
        await expect(cid.locator('.result-table tr[data-slot="1"] .kind-tag.bot')).to_be_visible()
        await shot(cid, "players-10-result-bot")
        assert errors == []


async def test_logging_in_while_playing_a_race_shows_the_servers_refusal_and_stays_a_guest(redis_url: str) -> None:
    """PROTOCOL.md "Accounts and ratings": a session that plays on in a race may not log in (``already_seated``); the
    account page shows why instead of breaking, and the guest keeps its seat. (Leaving the page of a race still
    waiting leaves it: then logging in is fine.)"""
    handle = f"Dee{secrets.token_hex(3)}"
    async with RaceServer(server_config(redis_url)) as server, launched_browser() as browser:
        owner = await player(server.url, "owner")
        await owner.register(handle, PASSWORD)
        await owner.close()
        site = http_url(server.url)
        page = await (await browser.new_context(viewport=DESKTOP)).new_page()
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        await first_visit(page, site + "/", "Dee")
        await page.click("button[data-action=create]")
        await expect(page.locator(".overlay.waiting")).to_be_visible()
        race = page.url.rsplit("/", 1)[1]
        bob = await player(server.url, "Bob")
        await bob.join(race)
        await expect(page.locator(".race-page [data-status=running]")).to_be_visible()
        form = await submit_account_form(page, "login", handle)
        await expect(form.locator(".error-text")).to_contain_text("already_seated")
        await expect(form.locator(".error-text")).to_contain_text(race)
        await expect(page.locator("#who .kind-tag.guest")).to_be_visible()
        await shot(page, "players-11-login-refused-while-seated")
        await bob.close()
        assert errors == []


async def test_a_handle_the_browser_refuses_is_explained_by_the_rule_not_only_please_match_the_format(race_server: RaceServer) -> None:
    async with launched_browser() as browser:
        page = await browser.new_page()
        await first_visit(page, http_url(race_server.url) + "/account", "Ann")
        handle = page.locator("form[data-form=register] input[name=handle]")
        await handle.fill("x")
        message = await handle.evaluate("(input) => input.validationMessage")
        assert "3–20 letters, digits, _ or -, starting with a letter or digit" in message, message
